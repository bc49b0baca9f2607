/**
 * One request through the engine: prefill (in chunks of at most `maxRows` rows), then decode
 * one token per step. Decode feeds each sampled token back on the GPU and keeps one step in
 * flight ahead of the host, so the GPU never waits for the 4-byte readback of the previous token.
 *
 * Records raw host timestamps (when each token id was on the host) and, with a timer, the GPU
 * time of every pass; every metric is computed from these records elsewhere.
 */
import { TokenscopeError } from '../errors.ts';
import { explainFailure } from '../gpu/device.ts';
import { GpuTimer, type PassTime } from '../gpu/timer.ts';
import type { KernelClass } from '../kernels/kernel.ts';
import { prefillRows } from '../kernels/rows.ts';
import type { Engine, StepOutcome } from './engine.ts';

export interface GenerateOptions {
  slot?: number;
  /** Tokens already in the KV cache before the prompt (llama-bench's -d depth). */
  startPos?: number;
  /** Prefill chunk size (default: the engine's maxRows). */
  chunk?: number;
  /** Stop at this token id (it counts as output). */
  stopAt?: number;
  /** Draw tokens on the GPU (temperature, top-k, top-p, seed); greedy when absent or temperature 0. */
  sampling?: { temperature: number; topK: number; topP: number; seed: number };
  /** Time GPU passes: per phase, or (profile) per kernel. */
  gpuTiming?: 'off' | 'phases' | 'kernels';
  signal?: AbortSignal;
  onToken?: (token: number, index: number) => void;
  /**
   * Read back the first step's logits and fail on NaN or ±Infinity (one vocabulary-sized readback
   * between prefill and decode, so sweeps ask for it on their first request only). Without it a
   * NaN is still caught: the GPU argmax then returns no token (0xFFFFFFFF).
   */
  checkLogits?: boolean;
}

/** GPU time of one kernel dispatch in profile mode. */
export interface KernelTime {
  phase: 'prefill' | 'decode';
  /** Decode step index, or prefill chunk index. */
  step: number;
  kind: KernelClass;
  label: string;
  ns: number;
}

export interface GenerationRecord {
  promptTokens: number[];
  outputTokens: number[];
  /** Host clock (ms) at request start and when each output token id was available. */
  tSend: number;
  tTokens: number[];
  /** GPU ms of the prefill (all chunks) and of each decode step, when timed. */
  gpuPrefillMs: number | null;
  gpuDecodeMs: number[] | null;
  /** Profile mode only. */
  kernels: KernelTime[] | null;
  /** Profile mode only: each step's GPU span, first pass begin → last pass end. */
  profileSpans: { phase: 'prefill' | 'decode'; step: number; ms: number }[] | null;
}

const MAX_TIMED_PASSES = 2048;

/** The run's failure when the model's numbers are not numbers (damaged weights or hyperparameters). */
export function nonFinite(where: string): TokenscopeError {
  return new TokenscopeError(
    'model-format',
    `The model produced non-finite values (NaN or ±Infinity) ${where}.`,
    'Its weights or hyperparameters are damaged (a NaN or infinite value, or an out-of-range epsilon or RoPE base): re-download or re-convert the file.',
  );
}

function cancelled(): TokenscopeError {
  return new TokenscopeError('cancelled', 'The run was cancelled.', 'Start it again when ready.');
}

export async function generate(engine: Engine, prompt: readonly number[], nGen: number, opts: GenerateOptions = {}): Promise<GenerationRecord> {
  const slot = opts.slot ?? 0;
  const start = opts.startPos ?? 0;
  const chunk = Math.min(opts.chunk ?? engine.shape.maxRows, engine.shape.maxRows);
  if (prompt.length < 1) throw new TokenscopeError('bad-input', 'The prompt is empty.', 'Give at least one token (BOS counts).');
  if (nGen < 1) throw new TokenscopeError('bad-input', 'Generate at least one token.', 'Use --gen 1 or more.');
  const end = start + prompt.length + nGen - 1;
  if (end > engine.shape.maxSeq) {
    throw new TokenscopeError(
      'bad-input',
      `Prompt (${prompt.length}) + output (${nGen}) at depth ${start} needs ${end} positions; the context holds ${engine.shape.maxSeq}.`,
      'Shorten the prompt or the output, or run with a longer context.',
    );
  }
  const mode = opts.gpuTiming ?? 'phases';
  const chunks = Math.ceil(prompt.length / chunk);
  const perKernel = mode === 'kernels';
  const timer = mode === 'off' ? null : GpuTimer.create(engine.ctx.device, perKernel ? MAX_TIMED_PASSES : Math.min(MAX_TIMED_PASSES, 2 * (chunks + nGen)));
  const passes: PassTime[] = [];
  const drainTimer = async () => {
    if (timer && timer.size > 0) passes.push(...(await timer.read()));
  };

  const record: GenerationRecord = {
    promptTokens: [...prompt],
    outputTokens: [],
    tSend: performance.now(),
    tTokens: [],
    gpuPrefillMs: null,
    gpuDecodeMs: null,
    kernels: null,
    profileSpans: null,
  };
  // Output token i is drawn with step counter i, so a seed fixes the whole generation.
  const drawAt = (i: number) => (opts.sampling ? { ...opts.sampling, step: i } : undefined);
  const accept = (o: StepOutcome): boolean => {
    const token = o.tokens[0];
    // The GPU argmax finds no maximum among NaN logits and returns its "none" id, 0xFFFFFFFF.
    if (!(token < engine.config.vocabSize)) throw nonFinite(`in the logits of output token ${record.outputTokens.length} (no token could be chosen)`);
    record.outputTokens.push(token);
    record.tTokens.push(o.tDone);
    opts.onToken?.(token, record.outputTokens.length - 1);
    return token === opts.stopAt || record.outputTokens.length >= nGen;
  };

  // Steps submitted ahead of the host; on any failure they are settled before returning, so a
  // step queued behind a lost device or a refused token never rejects unhandled.
  const inflight: Promise<StepOutcome>[] = [];
  try {
    // Prefill: every chunk submitted back to back; only the last one samples.
    let last: Promise<StepOutcome> | undefined;
    for (let c = 0; c < chunks; c++) {
      const tokens = prompt.slice(c * chunk, (c + 1) * chunk);
      const isLast = c === chunks - 1;
      const step = engine.submit(
        { rows: prefillRows(slot, start + c * chunk, tokens.length), tokens, sample: isLast ? [tokens.length - 1] : [], sampling: drawAt(0) },
        { timer, phase: 'prefill', step: c, perKernel },
      );
      if (isLast) last = step;
      else await step;
      if (perKernel) await step.then(drainTimer);
    }
    const first = await last!;
    if (opts.checkLogits) {
      const logits = await engine.readLogits(0);
      const bad = logits.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw nonFinite(`in the first step's logits (token ${bad} is ${logits[bad]})`);
    }
    let done = accept(first);

    // Decode: one step in flight ahead of the host (none in profile mode, which reads timers per step).
    const ahead = perKernel ? 0 : 1;
    let submitted = 1;
    let pos = start + prompt.length;
    while (!done) {
      if (opts.signal?.aborted) throw cancelled();
      while (submitted < nGen && inflight.length <= ahead) {
        const step = engine.submit(
          { rows: [{ slot, pos: pos++ }], tokens: 'device', sample: [0], sampling: drawAt(submitted) },
          { timer, phase: 'decode', step: submitted, perKernel },
        );
        // Handled here so that it may reject (a lost device) while the host awaits the step before it.
        step.catch(() => {});
        inflight.push(step);
        submitted++;
      }
      const outcome = await inflight.shift()!;
      if (perKernel) await drainTimer();
      done = accept(outcome);
    }
    await Promise.allSettled(inflight);
    await drainTimer();
  } catch (e) {
    throw await explainFailure(engine.ctx, e);
  } finally {
    await Promise.allSettled(inflight);
    timer?.destroy();
  }
  if (timer) attributeGpuTime(record, passes, perKernel);
  return record;
}

/** Sum pass times into the prefill and each decode step (and, in profile mode, per kernel). */
function attributeGpuTime(record: GenerationRecord, passes: PassTime[], perKernel: boolean): void {
  let prefill = 0;
  const decode = new Map<number, number>();
  const kernels: KernelTime[] = [];
  const spans = new Map<string, { phase: 'prefill' | 'decode'; step: number; begin: number; end: number }>();
  for (const { tag, ns, startNs } of passes) {
    if (tag.phase !== 'prefill' && tag.phase !== 'decode') continue;
    const phase = tag.phase;
    const step = tag.step ?? 0;
    if (phase === 'prefill') prefill += ns;
    else if (step < record.outputTokens.length) decode.set(step, (decode.get(step) ?? 0) + ns);
    if (perKernel && tag.kind) kernels.push({ phase, step, kind: tag.kind as KernelClass, label: tag.label ?? '', ns });
    const key = `${phase} ${step}`;
    const span = spans.get(key) ?? { phase, step, begin: Infinity, end: -Infinity };
    spans.set(key, { ...span, begin: Math.min(span.begin, startNs), end: Math.max(span.end, startNs + ns) });
  }
  if (perKernel) {
    // Timestamps are read per step in profile mode, so each step's passes share one origin.
    record.profileSpans = [...spans.values()].map((s) => ({ phase: s.phase, step: s.step, ms: (s.end - s.begin) / 1e6 }));
  }
  record.gpuPrefillMs = prefill / 1e6;
  record.gpuDecodeMs = [...decode.entries()].sort((a, b) => a[0] - b[0]).map(([, ns]) => ns / 1e6);
  record.kernels = perKernel ? kernels : null;
}
