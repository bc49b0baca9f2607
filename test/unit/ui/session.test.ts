import { describe, expect, it } from 'vitest';
import type { ReactiveControllerHost } from 'lit';
import { GpuSession } from '../../../src/ui/session.ts';
import { defaultJob } from '../../../src/jobs/job-spec.ts';

/** A Lit host that records nothing: the session only asks it to re-render. */
const host = { addController() {}, removeController() {}, requestUpdate() {}, updateComplete: Promise.resolve(true) } as unknown as ReactiveControllerHost;

describe('GpuSession: one run at a time', () => {
  it('a second run started in the same turn is refused before the first awaits anything', async () => {
    const session = new GpuSession(host, '');
    const job = defaultJob({ cpuLike: true });
    const first = session.run(job);
    const second = session.run(job);
    await expect(second).rejects.toThrow(/already in progress/);
    // The first run goes on alone (here it fails: Node has no navigator.gpu), and frees the session.
    await expect(first).rejects.toThrow();
    expect(session.status).not.toBe('running');
  });
});
