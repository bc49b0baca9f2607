import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { BenchJob, JobHooks } from '../jobs/job-spec.ts';
import { describeEnvironment } from '../measure/environment.ts';
import type { BenchResult, Environment } from '../measure/schema.ts';
import { TokenscopeError, describeError } from '../errors.ts';
import { throwIfCancelled } from '../measure/protocol.ts';
import { parseFallbacks, type Fallback } from '../gpu/capabilities.ts';
import { acquireGpu, browserGpu, explainFailure, type GpuContext } from '../gpu/device.ts';
import { rememberReadRoof } from './roof-memory.ts';
import { staleReusedRoofs } from '../measure/roofs-key.ts';

export type SessionStatus = 'starting' | 'ready' | 'unavailable' | 'running';

export interface ShownError {
  message: string;
  hint: string;
  code: string;
}

export function toShown(e: unknown): ShownError {
  if (e instanceof TokenscopeError) return { message: e.message, hint: e.hint, code: e.code };
  return { message: describeError(e), hint: '', code: 'unknown' };
}

/** What the page passes to one run besides the job. */
export type RunHooks = Pick<JobHooks, 'onProgress' | 'onPartial' | 'modelSource'> & {
  /**
   * The per-device roofs cache (roofs-store.ts): 'use' reuses roofs measured within the window,
   * 'fresh' measures them again; either way newly measured roofs are stored. Absent: not used.
   */
  roofsCache?: 'use' | 'fresh';
};

/**
 * The page's GPU session: acquires the device, runs jobs one at a time, survives device loss
 * (the run fails, its partial result stays with the caller, the next run gets a fresh device).
 */
export class GpuSession implements ReactiveController {
  status: SessionStatus = 'starting';
  environment: Environment | null = null;
  /** Why WebGPU cannot be used here (status 'unavailable'). */
  error: ShownError | null = null;
  progress = { step: '', fraction: 0, startedAt: 0 };
  /** Runs started in this page (the tests check that opening a link starts none). */
  runsStarted = 0;
  readonly disabled: Set<Fallback>;
  /** A problem with the `?disable=` parameter, shown once. */
  readonly paramError: ShownError | null = null;
  private ctx: GpuContext | null = null;
  private abort: AbortController | null = null;
  /**
   * A cancelled job still finishing its last GPU submission: control returns to the visitor at
   * once, and the next run starts only after it settles (one job on the device at a time).
   */
  private settling: Promise<void> = Promise.resolve();
  private windingDown = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    search: string,
  ) {
    host.addController(this);
    this.disabled = new Set();
    try {
      for (const f of parseFallbacks(new URLSearchParams(search).get('disable'))) this.disabled.add(f);
    } catch (e) {
      this.paramError = { message: describeError(e), hint: 'Fix the ?disable= parameter in the address bar.', code: 'bad-input' };
    }
  }

  hostConnected(): void {
    // Failure is shown through `status`/`error`; nothing else to do with it here.
    this.ensureDevice().catch(() => {});
  }

  hostDisconnected(): void {
    this.abort?.abort();
    this.ctx?.destroy();
    this.ctx = null;
  }

  /** The live device, acquiring a fresh one when there is none or the last was lost. */
  async ensureDevice(): Promise<GpuContext> {
    if (this.ctx && !this.ctx.isLost()) return this.ctx;
    this.ctx = null;
    try {
      const ctx = await acquireGpu(browserGpu(), { runtime: 'browser', disable: this.disabled });
      this.ctx = ctx;
      this.environment = describeEnvironment(ctx, this.disabled);
      if (this.status === 'starting' || this.status === 'unavailable') this.status = 'ready';
      this.error = null;
      void ctx.lost.then(() => this.host.requestUpdate());
      return ctx;
    } catch (e) {
      this.status = 'unavailable';
      this.error = toShown(e);
      throw e;
    } finally {
      this.host.requestUpdate();
    }
  }

  /** Run a job; progress and partial results go to the hooks as they arrive. */
  async run(job: BenchJob, hooks: RunHooks = {}): Promise<BenchResult> {
    // Claimed before the first await: two calls in the same turn cannot both pass the check.
    if (this.status === 'running') throw new TokenscopeError('bad-input', 'A run is already in progress.', 'Wait for it to finish or cancel it.');
    this.status = 'running';
    this.runsStarted++;
    const abort = new AbortController();
    this.abort = abort;
    this.progress = { step: this.windingDown ? 'waiting for the cancelled run to stop' : 'starting', fraction: 0, startedAt: performance.now() };
    this.host.requestUpdate();
    try {
      await this.settling;
      throwIfCancelled(abort.signal);
      const ctx = await this.ensureDevice();
      this.progress = { step: 'starting', fraction: 0, startedAt: performance.now() };
      const { roofsCache, ...jobHooks } = hooks;
      // The cache's code loads only for runs that use it (the page's first load stays small).
      const store = roofsCache && job.probe && !job.roofs && this.environment ? await import('./roofs-store.ts') : null;
      const roofsKey = store && this.environment ? store.pageRoofsKey(this.environment, job) : null;
      const reused = store && roofsKey && roofsCache === 'use' ? await store.storedRoofs(roofsKey) : undefined;
      if (reused) job = { ...job, roofs: reused };
      // The engine and the job runner load when the first run starts, not with the page; a failed
      // load fails this run as the run itself would.
      const running = loadRunner().then(({ runJob, localStorageTuneCache }) =>
        runJob(ctx, job, this.disabled, {
          ...jobHooks,
          signal: abort.signal,
          onProgress: (step, fraction) => {
            if (abort.signal.aborted) return;
            this.progress = { ...this.progress, step, fraction };
            jobHooks.onProgress?.(step, fraction);
            this.host.requestUpdate();
          },
          waitUntilVisible,
          tuneCache: localStorageTuneCache(),
        }),
      );
      const settled = () => {
        this.windingDown = false;
      };
      this.settling = running.then(settled, settled);
      // Cancel answers at once; the job stops at its next check and `settling` waits for that.
      const cancelled = new Promise<never>((_, reject) =>
        abort.signal.addEventListener('abort', () => reject(new TokenscopeError('cancelled', 'The run was cancelled.', 'Start it again when ready.')), {
          once: true,
        }),
      );
      try {
        const result = await Promise.race([running, cancelled]);
        if (result.ceilings) rememberReadRoof(result.environment, result.ceilings.read_bandwidth_gbps, result.created_at);
        const source = result.ceilings?.source;
        if (store && roofsKey && result.ceilings && source?.kind === 'measured') await store.storeRoofs(roofsKey, result.ceilings, source.measured_at);
        const stale = staleReusedRoofs(result.ceilings);
        if (store && roofsKey && stale) {
          await store.dropRoofs(roofsKey);
          result.notes = [...(result.notes ?? []), stale];
        }
        return result;
      } catch (e) {
        throw await explainFailure(ctx, e);
      }
    } finally {
      if (this.status === 'running') this.status = 'ready';
      this.abort = null;
      this.host.requestUpdate();
    }
  }

  cancel(): void {
    if (!this.abort || this.abort.signal.aborted) return;
    this.windingDown = true;
    this.abort.abort();
  }

  /** Destroy the device as a driver reset would (the tests' `loseDevice` hook). */
  loseDevice(): void {
    this.ctx?.destroy();
  }
}

/**
 * A part of the page loaded on first use (`load` imports it); a failed load — the network gone, or
 * the site updated since the page was opened — is a typed error saying so.
 */
export async function loadPart<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    throw new TokenscopeError(
      'io',
      `The page could not load ${what} (${describeError(e)}).`,
      'Check the connection and reload the page; if the site was just updated, a reload fetches the new version.',
      { cause: e },
    );
  }
}

/** The job runner (jobs/job.ts, with the engine) and the page's tune cache. */
async function loadRunner() {
  const [{ runJob }, { localStorageTuneCache }] = await loadPart('the measuring code', () =>
    Promise.all([import('../jobs/job.ts'), import('../kernels/autotune.ts')]),
  );
  return { runJob, localStorageTuneCache };
}

/** Resolves at once while the tab is visible; otherwise when it becomes visible again (true: it had to wait). */
function waitUntilVisible(): Promise<boolean> {
  if (document.visibilityState === 'visible') return Promise.resolve(false);
  return new Promise((ok) => {
    const onChange = () => {
      if (document.visibilityState !== 'visible') return;
      document.removeEventListener('visibilitychange', onChange);
      ok(true);
    };
    document.addEventListener('visibilitychange', onChange);
  });
}
