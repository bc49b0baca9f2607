/**
 * The latency protocol, implemented once: for each prompt length of the sweep, one full-length
 * warm-up, then `reps` timed requests (seeded random token ids, BOS first, as llama-bench does —
 * or a real text prompt), a short cool-down between requests, and, in the page, runs only while
 * the tab is visible. Headline times are on the host clock (request start → token id on the host);
 * GPU time per phase comes from timestamp queries; the per-kernel profile is a separate run that
 * never feeds the headline numbers. The cold path (load, compile, first request) is reported apart.
 */
import { TokenscopeError } from '../errors.ts';
import { mulberry32 } from '../random.ts';
import type { KernelClass } from '../kernels/kernel.ts';
import { prefillRows } from '../kernels/rows.ts';
import type { Engine } from '../model/engine.ts';
import { generate, type GenerationRecord } from '../model/generate.ts';
import type { ColdStart } from '../model/load.ts';
import type { ClockKind } from '../gpu/timer.ts';
import {
  depthCurve,
  kernelBreakdown,
  latencyRow,
  phaseVerdicts,
  decodeWaterfall,
  type DecodeWaterfall,
  type DepthPoint,
  type KernelRow,
  type KernelSample,
  type KernelPoint,
  kernelPoints,
  type LatencyRow,
  type LengthCosts,
  type PhaseCost,
  type RequestRecord,
  type Roofs,
  timingOf,
} from './latency-summary.ts';
import { latencyStats, ttftMs, type LatencyStats } from './metrics.ts';
import { throwIfCancelled } from './protocol.ts';
import { summarize, type Summary } from './stats.ts';
import type { Verdict } from './roofline.ts';
import type { LatencyReport } from './schema.ts';

export interface LatencySettings {
  prompt_lengths: number[];
  output_tokens: number;
  reps: number;
  warmup: number;
  /** Pause between requests, ms. */
  cooldown_ms: number;
  seed: number;
  /** Prefill chunk size. */
  chunk: number;
  /** Also run the per-kernel profile (separate runs; never in the headline numbers). */
  profile: boolean;
  /** A real text prompt's token ids instead of random ids (then prompt_lengths has its one length). */
  prompt_ids?: number[];
  /**
   * Cached prefix lengths (`--cached-prefix`): for each prompt length P and each C < P, TTFT with the
   * first C positions already in the KV cache, as a prefix-cache hit leaves them.
   */
  cached_prefixes?: number[];
}

/** TTFT of prompt length P when its first C tokens are cached, beside P's uncached TTFT. */
export interface PrefixTtftRow {
  prompt_tokens: number;
  cached_tokens: number;
  n: number;
  ttft: Summary;
  /** The uncached row's median TTFT (C = 0), ms. */
  uncached_ttft_p50_ms: number;
  /** uncached p50 − this p50, ms (below 0 where the cached run came out slower). */
  saved_ms: number;
  /** saved_ms ÷ uncached p50. */
  saved_share: number;
}

export interface LatencySection {
  settings: LatencySettings;
  /** Which clock timed the GPU phases. */
  gpu_clock: ClockKind;
  cold_start: ColdStart & { first_ttft_ms: number; warm_ttft_ms: number; first_prompt_tokens: number };
  requests: RequestRecord[];
  rows: LatencyRow[];
  depth_curve: DepthPoint[];
  /** With `cached_prefixes`: TTFT per (prompt length, cached prefix), beside the uncached TTFT. */
  prefix_ttft?: PrefixTtftRow[];
  /** Dispatches (kernel launches) per step from the recorded programs: the longest prompt's first prefill chunk, and a decode step after the shortest prompt. */
  dispatches_per_step?: { prefill: number; decode: number };
  /** Where a decode token's time goes, per prompt length (rows with GPU timestamps and the launch roof). */
  decode_waterfall?: DecodeWaterfall[];
  /** vLLM-style aggregates over every timed request of the sweep. */
  summary: LatencyStats & { completed: number };
  verdicts: { prompt_tokens: number; prefill: Verdict; decode: Verdict | null }[];
  kernels: KernelRow[] | null;
  /** Profile mode: each kernel class of each phase at each profiled prompt length, for the roofline. */
  kernel_points?: KernelPoint[] | null;
  /**
   * Profile mode's GPU time per step (first pass begin → last pass end), median, by phase; against
   * the headline GPU step time it shows how much one-pass-per-kernel inflates timing here.
   */
  profile_step_ms: { prefill: number | null; decode: number | null } | null;
  /** Trimmed sections when shared as a link. */
  trimmed?: boolean;
}

export interface LatencyHooks {
  signal?: AbortSignal;
  onProgress?: (step: string, fraction: number) => void;
  /** Called with each finished request and the rows so far (the page draws them live). */
  onRequest?: (section: LatencyReport) => void;
  /** The page's visibility: resolves at once when visible; true when it had to wait. */
  waitUntilVisible?: () => Promise<boolean>;
  /**
   * One block of the streaming read (GB/s), timed before each length's first timed request and after
   * every timed request: each request's read_beside_gbps is the mean of the blocks on either side.
   */
  readBeside?: () => Promise<number>;
}

/** Seeded random prompt ids in [3, vocab) with BOS first (llama-bench style; ids < 3 are special). */
export function randomPrompt(length: number, vocabSize: number, bos: number, seed: number): number[] {
  const random = mulberry32(seed);
  const ids = [bos];
  for (let i = 1; i < length; i++) ids.push(3 + Math.floor(random() * (vocabSize - 3)));
  return ids;
}

/**
 * The prompt of repetition `rep` at length P (warm-ups are reps −1, −2, …): seeded per (rep, P),
 * so every engine measured with the same seed and vocabulary gets the same ids.
 */
export function sweepPrompt(P: number, rep: number, seed: number, vocabSize: number, bos: number): number[] {
  return randomPrompt(P, vocabSize, bos, seed + 7919 * rep + P);
}

const medianOrNull = (xs: number[]) => (xs.length ? summarize(xs).p50 : null);

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** One request of the protocol: stop if cancelled, wait until the tab is visible, run it, cool down. */
export async function protocolRequest<T>(
  hooks: Pick<LatencyHooks, 'signal' | 'waitUntilVisible'>,
  cooldownMs: number,
  request: () => Promise<T>,
): Promise<{ value: T; disturbed: boolean }> {
  throwIfCancelled(hooks.signal);
  const disturbed = (await hooks.waitUntilVisible?.()) ?? false;
  const value = await request();
  if (cooldownMs > 0) await sleep(cooldownMs);
  return { value, disturbed };
}

function toRecord(g: GenerationRecord, rep: number, disturbed: boolean): RequestRecord {
  return {
    prompt_tokens: g.promptTokens.length,
    output_tokens: g.outputTokens.length,
    rep,
    token_ms: g.tTokens.map((t) => t - g.tSend),
    gpu_prefill_ms: g.gpuPrefillMs,
    gpu_decode_ms: g.gpuDecodeMs,
    disturbed,
  };
}

/** Costs of one prompt length: step.ts's costOfStep over each prefill chunk and a decode step at the mean depth. */
export function lengthCosts(engine: Engine, P: number, gen: number, chunk: number): LengthCosts {
  const prefill: PhaseCost = { flops: 0, bytes: 0 };
  const prefillByKind: Partial<Record<KernelClass, PhaseCost>> = {};
  const chunks = Math.ceil(P / chunk);
  for (let c = 0; c < chunks; c++) {
    const n = Math.min(chunk, P - c * chunk);
    const cost = engine.stepCost({ rows: prefillRows(0, c * chunk, n), tokens: 'device', sample: c === chunks - 1 ? [n - 1] : [] });
    prefill.flops += cost.total.flops;
    prefill.bytes += cost.total.bytes;
    for (const [kind, k] of Object.entries(cost.byKind) as [KernelClass, PhaseCost][]) {
      const sum = prefillByKind[kind] ?? { flops: 0, bytes: 0 };
      prefillByKind[kind] = { flops: sum.flops + k.flops, bytes: sum.bytes + k.bytes };
    }
  }
  const meanDepth = Math.round(P + (gen - 2) / 2);
  const decode = engine.stepCost({ rows: [{ slot: 0, pos: Math.max(P, meanDepth) }], tokens: 'device', sample: [0] });
  return { prefill, decodeStep: { flops: decode.total.flops, bytes: decode.total.bytes }, byKind: { prefill: prefillByKind, decode: decode.byKind } };
}

/** The sweep's prompt lengths: the given prompt's where there is one. */
function sweepLengths(settings: Pick<LatencySettings, 'prompt_lengths' | 'prompt_ids'>): number[] {
  return settings.prompt_ids ? [settings.prompt_ids.length] : settings.prompt_lengths;
}

/** Each prompt length's bytes and FLOPs (lengthCosts), by length. */
function sweepCosts(engine: Engine, settings: Pick<LatencySettings, 'prompt_lengths' | 'prompt_ids' | 'output_tokens' | 'chunk'>): Map<number, LengthCosts> {
  const lengths = sweepLengths(settings);
  return new Map(lengths.map((P) => [P, lengthCosts(engine, P, settings.output_tokens, settings.chunk)]));
}

/** The parts of a latency section that divide by a roof: what {@link roofFigures} recomputes. */
export type RoofFigures = Pick<LatencySection, 'rows' | 'depth_curve' | 'verdicts' | 'decode_waterfall'>;

/**
 * A latency section's figures against `roofs`, from its requests alone: the rows ("of read roof",
 * "of matmul roof"), the TPOT-by-depth ceilings, the verdicts and the decode waterfall. runLatency
 * builds them so, and a run whose read roof is raised at its end (the device read more after the
 * model phases than before: ceilings.drift) builds them again with the raised roof.
 */
export function roofFigures(
  engine: Engine,
  settings: Pick<LatencySettings, 'prompt_lengths' | 'prompt_ids' | 'output_tokens' | 'chunk'>,
  requests: readonly RequestRecord[],
  dispatches: { prefill: number; decode: number } | undefined,
  roofs: Roofs,
  costs: ReadonlyMap<number, LengthCosts> = sweepCosts(engine, settings),
): RoofFigures {
  const lengths = sweepLengths(settings);
  const rows = lengths.map((P) =>
    latencyRow(
      requests.filter((r) => r.prompt_tokens === P),
      costs.get(P)!,
      roofs,
    ),
  );
  // A decode step's bytes at the depth it attends (a step at position depth − 1 reads depth keys).
  const bytesAtDepth = (depth: number) => engine.stepCost({ rows: [{ slot: 0, pos: Math.max(0, depth - 1) }], tokens: 'device', sample: [0] }).total.bytes;
  const rowDispatches = (P: number) => dispatches && { prefill: dispatches.prefill * Math.ceil(P / settings.chunk), decode: dispatches.decode };
  return {
    rows,
    depth_curve: depthCurve(requests, bytesAtDepth, roofs),
    verdicts: rows.map((row) => ({
      prompt_tokens: row.prompt_tokens,
      ...phaseVerdicts(row, costs.get(row.prompt_tokens)!, roofs, rowDispatches(row.prompt_tokens)),
    })),
    decode_waterfall: dispatches ? rows.flatMap((row) => decodeWaterfall(row, roofs, dispatches.decode) ?? []) : [],
  };
}

export async function runLatency(engine: Engine, cold: ColdStart, roofs: Roofs, settings: LatencySettings, hooks: LatencyHooks = {}): Promise<LatencySection> {
  const c = engine.config;
  const gen = settings.output_tokens;
  const lengths = sweepLengths(settings);
  for (const P of lengths) {
    if (P < 1 || P + gen - 1 > engine.shape.maxSeq) {
      throw new TokenscopeError(
        'bad-input',
        `Prompt length ${P} with ${gen} output tokens does not fit the ${engine.shape.maxSeq}-position context.`,
        'Use shorter prompt lengths or a longer context.',
      );
    }
  }
  const promptFor = (P: number, rep: number) => settings.prompt_ids ?? sweepPrompt(P, rep, settings.seed, c.vocabSize, c.bosId);
  const cachedPairs = (P: number) => (settings.cached_prefixes ?? []).filter((C) => C > 0 && C < P);
  const total = lengths.reduce((n, P) => n + (1 + cachedPairs(P).length) * (settings.warmup + settings.reps) + (settings.profile ? 1 : 0), 0);
  let done = 0;
  const progress = (what: string) => hooks.onProgress?.(what, done / total);
  const run = async (P: number, rep: number, gpuTiming: 'phases' | 'kernels') => {
    // The sweep's first request (a warm-up unless warmup is 0) checks the logits are numbers.
    const checkLogits = done === 0;
    const { value: g, disturbed } = await protocolRequest(hooks, settings.cooldown_ms, () =>
      generate(engine, promptFor(P, rep), gen, { gpuTiming, chunk: settings.chunk, signal: hooks.signal, checkLogits }),
    );
    done++;
    return { g, disturbed };
  };

  const requests: RequestRecord[] = [];
  const rows: LatencyRow[] = [];
  const kernelSamples: KernelSample[] = [];
  const points: KernelPoint[] = [];
  const costs = new Map<number, LengthCosts>();
  let first: GenerationRecord | null = null;
  const spans: { phase: 'prefill' | 'decode'; ms: number }[] = [];
  const prefixRows: PrefixTtftRow[] = [];
  /** TTFT (ms) of P's prompt with its first C tokens prefilled untimed first: the timed request prefills P − C from position C. */
  const cachedTtft = async (P: number, C: number, rep: number): Promise<number> => {
    const prompt = promptFor(P, rep);
    await generate(engine, prompt.slice(0, C), 1, { gpuTiming: 'off', chunk: settings.chunk, signal: hooks.signal });
    const { value: g } = await protocolRequest(hooks, settings.cooldown_ms, () =>
      generate(engine, prompt.slice(C), 1, { gpuTiming: 'off', chunk: settings.chunk, signal: hooks.signal, startPos: C }),
    );
    done++;
    return ttftMs({ promptTokens: P - C, tSend: g.tSend, tTokens: g.tTokens })!;
  };

  for (const P of lengths) {
    costs.set(P, lengthCosts(engine, P, gen, settings.chunk));
    for (let w = 0; w < settings.warmup; w++) {
      progress(`warm-up, prompt ${P}`);
      const { g } = await run(P, -1 - w, 'phases');
      first ??= g;
    }
    let readBefore = await hooks.readBeside?.();
    for (let rep = 0; rep < settings.reps; rep++) {
      progress(`prompt ${P} tokens, repetition ${rep + 1}/${settings.reps}`);
      const { g, disturbed } = await run(P, rep, 'phases');
      first ??= g;
      const readAfter = await hooks.readBeside?.();
      const record = toRecord(g, rep, disturbed);
      // Four significant figures: a block's median moves more than that between blocks, and a link carries every request.
      const beside = readBefore !== undefined && readAfter !== undefined ? Number(((readBefore + readAfter) / 2).toPrecision(4)) : undefined;
      requests.push(beside !== undefined ? { ...record, read_beside_gbps: beside } : record);
      readBefore = readAfter;
      hooks.onRequest?.({ requests, rows });
    }
    rows.push(
      latencyRow(
        requests.filter((r) => r.prompt_tokens === P),
        costs.get(P)!,
        roofs,
      ),
    );
    hooks.onRequest?.({ requests, rows });
    for (const C of cachedPairs(P)) {
      const samples: number[] = [];
      for (let rep = -settings.warmup; rep < settings.reps; rep++) {
        progress(`prompt ${P} tokens with ${C} cached, ${rep < 0 ? 'warm-up' : `repetition ${rep + 1}/${settings.reps}`}`);
        const t = await cachedTtft(P, C, rep);
        if (rep >= 0) samples.push(t);
      }
      const uncached = rows.at(-1)!.ttft.p50;
      const ttft = summarize(samples);
      prefixRows.push({
        prompt_tokens: P,
        cached_tokens: C,
        n: samples.length,
        ttft,
        uncached_ttft_p50_ms: uncached,
        saved_ms: uncached - ttft.p50,
        saved_share: uncached > 0 ? (uncached - ttft.p50) / uncached : 0,
      });
    }
    if (settings.profile) {
      progress(`per-kernel profile, prompt ${P}`);
      const { g } = await run(P, 0, 'kernels');
      // Steps of different profile runs stay apart: step ids are per run.
      const offset = kernelSamples.length ? Math.max(...kernelSamples.map((k) => k.step)) + 1 : 0;
      const mine: KernelSample[] = (g.kernels ?? []).map((k) => ({ phase: k.phase, step: offset + k.step, kind: k.kind, ns: k.ns }));
      kernelSamples.push(...mine);
      points.push(...kernelPoints(P, kernelBreakdown(mine), costs.get(P)!.byKind!));
      for (const s of g.profileSpans ?? []) spans.push({ phase: s.phase, ms: s.ms });
    }
  }
  hooks.onProgress?.('summarising', 1);

  const firstTtft = first ? ttftMs({ promptTokens: first.promptTokens.length, tSend: first.tSend, tTokens: first.tTokens })! : 0;
  const firstLength = first?.promptTokens.length ?? 0;
  const warmRow = rows.find((r) => r.prompt_tokens === firstLength);
  // Prefill: the longest prompt's first chunk; decode: after the shortest prompt (a long context may add a combine pass).
  const dispatches = await engine.dispatchesPerStep(Math.min(settings.chunk, Math.max(...lengths)), Math.min(...lengths) + 1);
  return {
    settings,
    gpu_clock: requests.some((r) => r.gpu_prefill_ms !== null) ? 'gpu-timestamp' : 'host',
    cold_start: { ...cold, first_ttft_ms: firstTtft, warm_ttft_ms: warmRow?.ttft.p50 ?? 0, first_prompt_tokens: firstLength },
    requests,
    ...(settings.cached_prefixes?.length ? { prefix_ttft: prefixRows } : {}),
    dispatches_per_step: dispatches,
    summary: { ...latencyStats(requests.map(timingOf)), completed: requests.length },
    ...roofFigures(engine, settings, requests, dispatches, roofs, costs),
    kernels: settings.profile ? kernelBreakdown(kernelSamples) : null,
    kernel_points: settings.profile ? points : null,
    profile_step_ms: settings.profile
      ? {
          prefill: medianOrNull(spans.filter((s) => s.phase === 'prefill').map((s) => s.ms)),
          decode: medianOrNull(spans.filter((s) => s.phase === 'decode').map((s) => s.ms)),
        }
      : null,
  };
}
