/**
 * The page's CPU-reference worker (reference-thread.ts starts it): it reads the model's tensors
 * through the page (a `read` per tensor, answered with a copy of its bytes), dequantizes them into
 * its own f32 weights, then runs the teacher-forced sequence one position at a time and posts each
 * position's logits, never more than the page has allowed (`more`) ahead of what it has consumed.
 * The messages are in reference-protocol.ts.
 */
import type { GGUFTensorInfo } from '../model/gguf/reader.ts';
import { loadReferenceWeights, ReferenceModel } from '../model/reference.ts';
import { errorFields, type FromReferenceWorker, type ToReferenceWorker } from './reference-protocol.ts';

const post = (m: FromReferenceWorker, transfer: Transferable[] = []) =>
  (self as unknown as { postMessage(m: FromReferenceWorker, t: Transferable[]): void }).postMessage(m, transfer);

const reads = new Map<number, (bytes: Uint8Array) => void>();
let nextRead = 0;
let allowed = 0;
let wake: (() => void) | undefined;

function tensorBytes(tensor: GGUFTensorInfo): Promise<Uint8Array> {
  return new Promise((resolve) => {
    const id = nextRead++;
    reads.set(id, resolve);
    post({ type: 'read', id, tensor });
  });
}

async function run(start: Extract<ToReferenceWorker, { type: 'start' }>): Promise<void> {
  try {
    const t0 = performance.now();
    const weights = await loadReferenceWeights({ tensorBytes }, start.config, start.tensors, start.quant);
    const model = new ReferenceModel(start.config, weights, { seqLen: start.seqLen });
    post({ type: 'loaded', ms: performance.now() - t0 });
    allowed = Math.max(allowed, start.ahead);
    for (let pos = 0; pos < start.ids.length; pos++) {
      while (pos >= allowed) await new Promise<void>((resolve) => (wake = resolve));
      const t = performance.now();
      // forward() reuses its array: post a copy, transferred.
      const logits = Float32Array.from(model.forward(start.ids[pos], pos));
      post({ type: 'logits', pos, logits, ms: performance.now() - t }, [logits.buffer]);
    }
  } catch (e) {
    post({ type: 'error', error: errorFields(e) });
  }
}

self.onmessage = (e: MessageEvent<ToReferenceWorker>) => {
  const m = e.data;
  if (m.type === 'start') void run(m);
  else if (m.type === 'more') {
    allowed = Math.max(allowed, m.upTo);
    wake?.();
    wake = undefined;
  } else {
    // The page stops this worker when a read fails: a read is answered or never.
    reads.get(m.id)?.(m.bytes);
    reads.delete(m.id);
  }
};
