/**
 * Where the accuracy pass's CPU reference runs. In a page, in a module worker
 * (reference-worker.ts): its forward passes (≈ 2 · parameters FLOPs per position at ≈ 1 GFLOP/s
 * in JS, 0.2 s a position at 100 M parameters) and the dequantization of its weights would
 * otherwise hold the main thread, and in the worker they overlap the engine's GPU steps. In Node,
 * in the calling thread: the CLI has no page to keep responsive.
 *
 * Either way the caller asks for each position's logits in order; the worker computes at most
 * REFERENCE_AHEAD positions past the last one asked for, so unread logits never pile up.
 */
import { TokenscopeError } from '../errors.ts';
import type { OpenModel } from '../model/open.ts';
import type { Quantization } from '../model/recipes.ts';
import { loadReferenceWeights, ReferenceModel } from '../model/reference.ts';
import { reviveError, type FromReferenceWorker, type ToReferenceWorker } from './reference-protocol.ts';

export type ReferenceThread = 'worker' | 'main';

/** Positions the worker may compute past the last one the caller has asked for. */
export const REFERENCE_AHEAD = 4;

export interface ReferenceStream {
  readonly thread: ReferenceThread;
  /** Reading and dequantizing the weights, in the thread that did it (ms). */
  readonly loadMs: number;
  /** The forward passes so far, summed, in the thread that ran them (ms). */
  readonly forwardMs: number;
  /** The logits at `pos`: ask for 0, 1, 2, … in order. The array may be reused by the next call. */
  logits(pos: number): Promise<Float32Array>;
  /** Stops the worker (if any); pending calls reject. */
  dispose(): void;
}

export interface ReferenceStart {
  model: OpenModel;
  /** The teacher-forced sequence. */
  ids: readonly number[];
  quant?: Quantization;
  /** Default: 'worker' where module workers and a page exist, else 'main'. */
  thread?: ReferenceThread;
  signal?: AbortSignal;
  /** Tests: a worker other than reference-worker.ts. */
  createWorker?: () => Worker;
}

/** True where module workers exist and a page's main thread is worth keeping free. */
export function canRunReferenceOffThread(): boolean {
  return typeof Worker === 'function' && typeof document !== 'undefined';
}

/** Loads the reference's weights (in the chosen thread) and resolves when the first position can be asked for. */
export function startReference(start: ReferenceStart): Promise<ReferenceStream> {
  const thread = start.thread ?? (canRunReferenceOffThread() ? 'worker' : 'main');
  return thread === 'worker' ? inWorker(start) : inThread(start);
}

async function inThread({ model, ids, quant }: ReferenceStart): Promise<ReferenceStream> {
  const t0 = performance.now();
  const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors, quant), { seqLen: ids.length });
  const stream = {
    thread: 'main' as const,
    loadMs: performance.now() - t0,
    forwardMs: 0,
    logits(pos: number) {
      const t = performance.now();
      const logits = reference.forward(ids[pos], pos);
      stream.forwardMs += performance.now() - t;
      return Promise.resolve(logits);
    },
    dispose() {},
  };
  return stream;
}

function inWorker({ model, ids, quant, signal, createWorker }: ReferenceStart): Promise<ReferenceStream> {
  return new Promise((resolveStarted, rejectStarted) => {
    let worker: Worker;
    try {
      worker = createWorker?.() ?? new Worker(new URL('./reference-worker.ts', import.meta.url), { type: 'module', name: 'tokenscope-reference' });
    } catch (e) {
      rejectStarted(
        new TokenscopeError(
          'io',
          `the CPU reference's worker could not start: ${(e as Error).message}`,
          'Reload the page; a content blocker may refuse workers. Or turn the accuracy pass off.',
        ),
      );
      return;
    }
    const send = (m: ToReferenceWorker, transfer: Transferable[] = []) => worker.postMessage(m, transfer);
    const arrived = new Map<number, Float32Array>();
    let waiting: { pos: number; resolve: (l: Float32Array) => void; reject: (e: Error) => void } | undefined;
    let failure: Error | undefined;
    let started = false;

    const fail = (e: Error) => {
      if (failure) return;
      failure = e;
      stop();
      if (!started) rejectStarted(e);
      waiting?.reject(e);
      waiting = undefined;
    };
    const stop = () => {
      worker.terminate();
      signal?.removeEventListener('abort', onAbort);
      arrived.clear();
    };
    const onAbort = () => fail(new TokenscopeError('cancelled', 'The run was cancelled.', 'Start it again when ready.'));

    const stream: ReferenceStream & { loadMs: number; forwardMs: number } = {
      thread: 'worker',
      loadMs: 0,
      forwardMs: 0,
      logits(pos) {
        if (failure) return Promise.reject(failure);
        send({ type: 'more', upTo: pos + 1 + REFERENCE_AHEAD });
        const ready = arrived.get(pos);
        if (ready) {
          arrived.delete(pos);
          return Promise.resolve(ready);
        }
        return new Promise((resolve, reject) => (waiting = { pos, resolve, reject }));
      },
      dispose() {
        if (!failure) fail(new TokenscopeError('cancelled', "The CPU reference's worker was stopped.", ''));
      },
    };

    worker.onmessage = (e: MessageEvent<FromReferenceWorker>) => {
      const m = e.data;
      if (failure) return;
      if (m.type === 'read') {
        // A copy of the tensor's bytes (a read may be a view of the whole file), handed over.
        model.gguf.tensorBytes(m.tensor).then(
          (bytes) => {
            const copy = bytes.slice();
            if (!failure) send({ type: 'bytes', id: m.id, bytes: copy }, [copy.buffer]);
          },
          (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
        );
      } else if (m.type === 'loaded') {
        stream.loadMs = m.ms;
        started = true;
        resolveStarted(stream);
      } else if (m.type === 'logits') {
        stream.forwardMs += m.ms;
        if (waiting?.pos === m.pos) {
          waiting.resolve(m.logits);
          waiting = undefined;
        } else arrived.set(m.pos, m.logits);
      } else fail(reviveError(m.error));
    };
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      const message = e.message || 'it could not be loaded';
      // A worker that ran out of memory reports a RangeError: keep it one, as runAccuracy reads it.
      fail(
        /RangeError/.test(message)
          ? new RangeError(message)
          : new TokenscopeError('io', `the CPU reference's worker failed: ${message}`, 'Reload the page and try again, or turn the accuracy pass off.'),
      );
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    send({ type: 'start', config: model.config, tensors: model.tensors, quant, seqLen: ids.length, ids: [...ids], ahead: REFERENCE_AHEAD });
  });
}
