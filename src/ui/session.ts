import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { runJob, type BenchJob } from '../bench/job.ts';
import { describeEnvironment } from '../bench/environment.ts';
import type { BenchResult, Environment } from '../bench/schema.ts';
import { TokenscopeError, describeError } from '../errors.ts';
import { parseFallbacks, type OptionalFeature } from '../gpu/capabilities.ts';
import { acquireGpu, browserGpu, deviceLostError, type GpuContext } from '../gpu/device.ts';

export type SessionStatus = 'starting' | 'ready' | 'unavailable' | 'running';

export interface ShownError {
  message: string;
  hint: string;
  code: string;
}

function toShown(e: unknown): ShownError {
  if (e instanceof TokenscopeError) return { message: e.message, hint: e.hint, code: e.code };
  return { message: describeError(e), hint: '', code: 'unknown' };
}

/**
 * The page's GPU session: acquires the device, runs jobs one at a time, survives device loss
 * (the run is marked failed, partial results stay, the next run gets a fresh device).
 */
export class GpuSession implements ReactiveController {
  status: SessionStatus = 'starting';
  environment: Environment | null = null;
  /** Why WebGPU cannot be used here, or why the last run failed. */
  error: ShownError | null = null;
  result: BenchResult | null = null;
  progress = { step: '', fraction: 0, startedAt: 0 };
  readonly disabled: Set<OptionalFeature>;
  private ctx: GpuContext | null = null;
  private abort: AbortController | null = null;

  constructor(private readonly host: ReactiveControllerHost, search: string) {
    host.addController(this);
    this.disabled = new Set();
    try {
      for (const f of parseFallbacks(new URLSearchParams(search).get('disable'))) this.disabled.add(f);
    } catch (e) {
      this.error = { message: describeError(e), hint: 'Fix the ?disable= parameter in the address bar.', code: 'bad-input' };
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

  /** Run a job; progress and partial results update the page as they arrive. */
  async run(job: BenchJob, onProgress?: (step: string, fraction: number) => void): Promise<BenchResult> {
    if (this.status === 'running') throw new TokenscopeError('bad-input', 'A run is already in progress.', 'Wait for it to finish or cancel it.');
    const ctx = await this.ensureDevice();
    this.status = 'running';
    this.error = null;
    this.abort = new AbortController();
    this.progress = { step: 'starting', fraction: 0, startedAt: performance.now() };
    this.host.requestUpdate();
    try {
      const result = await runJob(ctx, job, this.disabled, {
        signal: this.abort.signal,
        onProgress: (step, fraction) => {
          this.progress = { ...this.progress, step, fraction };
          onProgress?.(step, fraction);
          this.host.requestUpdate();
        },
        onPartial: (partial) => {
          this.result = partial;
          this.host.requestUpdate();
        },
      });
      this.result = result;
      return result;
    } catch (e) {
      const error = ctx.isLost() ? deviceLostError() : e;
      this.error = toShown(error);
      throw error;
    } finally {
      this.status = 'ready';
      this.abort = null;
      this.host.requestUpdate();
    }
  }

  cancel(): void {
    this.abort?.abort();
  }

  /** Show a result that came from elsewhere (a permalink, a file). */
  show(result: BenchResult): void {
    this.result = result;
    this.host.requestUpdate();
  }
}
