import { describe, expect, it, vi } from 'vitest';
import type { ReactiveControllerHost } from 'lit';
import type { GpuContext } from '../../../src/gpu/device.ts';
import { GpuSession } from '../../../src/ui/session.ts';
import { defaultJob } from '../../../src/jobs/job-spec.ts';

/** A device that is never lost: only the runner's load can fail here. */
const ctx = {
  runtime: 'browser',
  caps: { adapter: { vendor: 'test' }, features: [], limits: {}, packedDot: false, cpuLike: true },
  timestamps: null,
  lost: new Promise(() => {}),
  isLost: () => false,
  destroy() {},
} as unknown as GpuContext;

vi.mock('../../../src/gpu/device.ts', async (original) => ({
  ...(await original<typeof import('../../../src/gpu/device.ts')>()),
  browserGpu: () => ({}) as GPU,
  acquireGpu: async () => ctx,
}));

// The runner's chunk fails to load, as a dynamic import does when the site changed or the network dropped.
vi.mock('../../../src/jobs/job.ts', () => {
  throw new TypeError('Failed to fetch dynamically imported module: ./assets/job-1234.js');
});

const host = { addController() {}, removeController() {}, requestUpdate() {}, updateComplete: Promise.resolve(true) } as unknown as ReactiveControllerHost;

describe('GpuSession: the job runner loads when a run starts', () => {
  it('a runner that fails to load fails the run with a typed error, and frees the session', async () => {
    const session = new GpuSession(host, '');
    const run = session.run(defaultJob({ cpuLike: true }));
    await expect(run).rejects.toMatchObject({ code: 'io', message: expect.stringMatching(/could not load the measuring code/) });
    await expect(run).rejects.toHaveProperty('hint', expect.stringMatching(/reload the page/));
    expect(session.status).toBe('ready');
    expect(session.runsStarted).toBe(1);
  });
});
