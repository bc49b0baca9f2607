/**
 * Pure summaries of a latency sweep: length-stratified rows, the TPOT-vs-depth curve, the
 * roofline verdicts and the kernel breakdown — each a function of the raw records and the
 * kernels' cost models. Formulas: docs/METRICS.md; key names follow vLLM where they exist.
 */
import type { KernelClass } from '../kernels/kernel.ts';
import { latencyStats, tpotMs, ttftMs, type LatencyStats, type RequestTiming } from './metrics.ts';
import { computeRoof, prefillGemmRoof } from './sections/environment.ts';
import { decodeCeilingTokensPerS, decodeEfficiency, perTokenOverheadMs, verdict, type RoofRates, type Verdict } from './roofline.ts';
import { summarize, type Summary } from './stats.ts';

/** One timed request as stored in the result (times relative to its own send, ms). */
export interface RequestRecord {
  prompt_tokens: number;
  output_tokens: number;
  rep: number;
  /** Host clock: when each output token id was available, ms after the request was sent. */
  token_ms: number[];
  /** GPU time of the whole prefill and of each decode step (timestamp queries), ms. */
  gpu_prefill_ms: number | null;
  gpu_decode_ms: number[] | null;
  /** The tab was hidden (or the machine otherwise disturbed) during this request. */
  disturbed: boolean;
  /**
   * The streaming read measured beside this request: the mean of the read-roof kernel's blocks timed
   * just before and just after it, GB/s to four significant figures (decode_of_read_beside). Absent
   * where none was taken.
   */
  read_beside_gbps?: number;
}

/** Work of one phase, from the kernels' cost models. */
export interface PhaseCost {
  flops: number;
  bytes: number;
}

/** What the sweep needs from the cost models at one prompt length. */
export interface LengthCosts {
  prefill: PhaseCost;
  /** One decode step at the mean depth of this length's decode steps (costs are linear in depth). */
  decodeStep: PhaseCost;
  /** The same, split by kernel class (for the profile's kernel points on the roofline). */
  byKind?: { prefill: Partial<Record<KernelClass, PhaseCost>>; decode: Partial<Record<KernelClass, PhaseCost>> };
}

/** A kernel class of one phase on the roofline: cost-model work per step over its profiled time. */
export interface KernelPoint {
  prompt_tokens: number;
  phase: 'prefill' | 'decode';
  kind: KernelClass;
  flops: number;
  bytes: number;
  /** Profiled GPU ms per step (one timed pass per kernel, so it includes that pass's cost). */
  ms: number;
}

/** Kernel points of one profiled run: each class's cost per step against its profiled time. */
export function kernelPoints(prompt: number, rows: readonly KernelRow[], byKind: NonNullable<LengthCosts['byKind']>): KernelPoint[] {
  return rows.flatMap((r) => {
    const cost = byKind[r.phase][r.kind];
    return cost && r.ms_per_step > 0 && cost.bytes > 0
      ? [{ prompt_tokens: prompt, phase: r.phase, kind: r.kind, flops: cost.flops, bytes: cost.bytes, ms: r.ms_per_step }]
      : [];
  });
}

export interface LatencyRow {
  prompt_tokens: number;
  output_tokens: number;
  /** Requests in this row. */
  n: number;
  /** Each stat of TTFT, TPOT, ITL and E2EL with vLLM's key names (mean/median/std/p90/p95/p99 …_ms). */
  stats: LatencyStats;
  ttft: Summary;
  tpot: Summary | null;
  /** prompt tokens / median TTFT. */
  prefill_tokens_per_s: number;
  /** 1 / median TPOT. */
  decode_tokens_per_s: number | null;
  prefill_flops: number;
  /** prefill FLOPs / median GPU prefill time (host TTFT when no GPU clock). */
  prefill_gflops: number;
  /**
   * prefill_gflops ÷ the prefill-GEMM roof measured on this device: the larger of the engine's own
   * linear kernel on an n×n f32 weight and, where measured, on an n×n q4_0 weight with 8-bit activations.
   */
  prefill_of_matmul_roof: number;
  decode_bytes_per_token: number;
  /** bytes per token / median TPOT: the bandwidth decode achieved, host clock. */
  decode_bandwidth_gbps: number | null;
  /** decode tokens/s ÷ ceiling (read roof / bytes per token). */
  decode_efficiency: number | null;
  /**
   * Median over requests of (bytes per token ÷ the request's TPOT) ÷ the read measured beside that
   * request: decode against what the memory system gave at the same moment, so load that slows both
   * alike cancels (docs/METRICS.md says how far it did on lavapipe). Absent where no request carries
   * read_beside_gbps, null without TPOT.
   */
  decode_of_read_beside?: number | null;
  decode_ceiling_tokens_per_s: number;
  gpu_prefill_ms: number | null;
  gpu_decode_ms: number | null;
  /** Median over requests of (TPOT − mean GPU decode step): host time per token the GPU waited (hostOverhead). */
  host_overhead_ms: number | null;
  /** TPOT − bytes/bandwidth: time per token beyond the bandwidth floor. */
  overhead_vs_floor_ms: number | null;
}

export interface DepthPoint {
  /** KV positions attended by the step (context depth). */
  depth: number;
  /** Median inter-token latency of steps at this depth, ms. */
  tpot_ms: number;
  n: number;
  /** Read roof / bytes per token at this depth. */
  ceiling_tokens_per_s: number;
}

/**
 * The measured roofs a verdict uses: the streaming-read bandwidth, and the faster FMA peak as the
 * compute roof (computeRoof: the hardware's arithmetic limit; the prefill-GEMM roofs are what our
 * prefill kernel reaches, the larger of them reported beside it as `prefill_of_matmul_roof`).
 */
export interface Roofs {
  read_bandwidth_gbps: number;
  f32_gflops: number;
  /** The f16 FMA peak: null without shader-f16, absent in older results and where only f32 was given. */
  f16_gflops?: number | null;
  matmul_f32_gflops: number;
  /** The prefill GEMM with 8-bit activations; null where not run, absent in older results. */
  matmul_q8_gflops?: number | null;
  /** The launch roof (µs per dependent dispatch, per submit-and-read round trip); absent in older results. */
  launch?: { dispatch_us: number; roundtrip_us: number };
}

export function rooflineOf(roofs: Roofs): RoofRates {
  return {
    computeFlopsPerS: computeRoof(roofs).gflops * 1e9,
    bandwidthBytesPerS: roofs.read_bandwidth_gbps * 1e9,
    ...(roofs.launch ? { dispatchUs: roofs.launch.dispatch_us } : {}),
  };
}

export function timingOf(r: RequestRecord): RequestTiming {
  return { promptTokens: r.prompt_tokens, tSend: 0, tTokens: r.token_ms };
}

const medianOf = (xs: number[]) => (xs.length ? summarize(xs).p50 : null);

/** The host-clock part of a row: what any engine's records give without a cost model. */
export type TimingRow = Pick<LatencyRow, 'prompt_tokens' | 'output_tokens' | 'n' | 'stats' | 'ttft' | 'tpot' | 'prefill_tokens_per_s' | 'decode_tokens_per_s'>;

/** The requests a row summarises: the undisturbed ones, or all of them when every one was disturbed. */
function rowRequests(requests: readonly RequestRecord[]): RequestRecord[] {
  const clean = requests.filter((r) => !r.disturbed);
  return clean.length > 0 ? clean : [...requests];
}

/** TTFT, TPOT and the rates of one prompt length's requests. */
export function timingRow(requests: readonly RequestRecord[]): TimingRow {
  const used = rowRequests(requests);
  const timings = used.map(timingOf);
  const ttfts = timings.map((t) => ttftMs(t)!);
  const tpots = timings.map(tpotMs).filter((x): x is number => x !== undefined);
  const ttft = summarize(ttfts);
  const tpot = tpots.length ? summarize(tpots) : null;
  return {
    prompt_tokens: used[0].prompt_tokens,
    output_tokens: used[0].output_tokens,
    n: used.length,
    stats: latencyStats(timings),
    ttft,
    tpot,
    prefill_tokens_per_s: used[0].prompt_tokens / (ttft.p50 / 1000),
    decode_tokens_per_s: tpot ? 1000 / tpot.p50 : null,
  };
}

/**
 * Host time per decode token: the median over requests of (the request's decode span − the GPU time
 * of its decode steps) ÷ its steps, i.e. its TPOT − its mean GPU step. Decode keeps a step queued
 * ahead of the host, so one gap can be shorter than its step's GPU time (the readback before it was
 * late, the one after it early) and a per-step median of differences sits around zero and reads
 * below it (−0.03 ms seen on lavapipe); over a whole request the GPU ran every step inside the span,
 * so the difference counts only the time the GPU waited for the host, and the readback of the last
 * token. Null without GPU timestamps.
 */
function hostOverhead(used: readonly RequestRecord[]): number | null {
  const perRequest = used.flatMap((r) => {
    const steps = Math.min(r.gpu_decode_ms?.length ?? 0, r.token_ms.length - 1);
    if (steps < 1) return [];
    let gpu = 0;
    for (let i = 0; i < steps; i++) gpu += r.gpu_decode_ms![i];
    return [(r.token_ms[steps] - r.token_ms[0] - gpu) / steps];
  });
  return medianOf(perRequest);
}

/** decode_of_read_beside of a row's requests (absent where none was paired with a read). */
function pairedDecode(used: readonly RequestRecord[], bytesPerToken: number): Pick<LatencyRow, 'decode_of_read_beside'> {
  if (!used.some((r) => r.read_beside_gbps !== undefined)) return {};
  const ratios = used.flatMap((r) => {
    const tpot = tpotMs(timingOf(r));
    return tpot !== undefined && tpot > 0 && r.read_beside_gbps ? [bytesPerToken / (tpot / 1000) / 1e9 / r.read_beside_gbps] : [];
  });
  return { decode_of_read_beside: medianOf(ratios) };
}

/** One length-stratified row from the requests of one prompt length. */
export function latencyRow(requests: readonly RequestRecord[], costs: LengthCosts, roofs: Roofs): LatencyRow {
  const used = rowRequests(requests);
  const timing = timingRow(used);
  const { ttft, tpot, decode_tokens_per_s: decodeRate } = timing;
  const gpuPrefill = medianOf(used.flatMap((r) => (r.gpu_prefill_ms !== null ? [r.gpu_prefill_ms] : [])));
  const gpuDecode = medianOf(used.flatMap((r) => r.gpu_decode_ms ?? []));
  const bw = roofs.read_bandwidth_gbps * 1e9;
  const ceiling = decodeCeilingTokensPerS(bw, costs.decodeStep.bytes);
  const prefillGflops = costs.prefill.flops / (((gpuPrefill ?? ttft.p50) / 1000) * 1e9);
  return {
    ...timing,
    prefill_flops: costs.prefill.flops,
    prefill_gflops: prefillGflops,
    prefill_of_matmul_roof: prefillGflops / prefillGemmRoof(roofs).gflops,
    decode_bytes_per_token: costs.decodeStep.bytes,
    decode_bandwidth_gbps: tpot ? costs.decodeStep.bytes / (tpot.p50 / 1000) / 1e9 : null,
    decode_efficiency: decodeRate !== null ? decodeEfficiency(decodeRate, ceiling) : null,
    ...pairedDecode(used, costs.decodeStep.bytes),
    decode_ceiling_tokens_per_s: ceiling,
    gpu_prefill_ms: gpuPrefill,
    gpu_decode_ms: gpuDecode,
    host_overhead_ms: hostOverhead(used),
    overhead_vs_floor_ms: tpot ? perTokenOverheadMs(tpot.p50, costs.decodeStep.bytes, bw) : null,
  };
}

/**
 * TPOT against context depth: every decode step's inter-token gap, binned by the depth it
 * attended (the step that produced output token i of a P-token prompt attends P + i positions),
 * with the bandwidth ceiling at each bin's depth.
 */
export function depthCurve(requests: readonly RequestRecord[], bytesAtDepth: (depth: number) => number, roofs: Roofs, bins = 12): DepthPoint[] {
  const gaps: { depth: number; ms: number }[] = [];
  for (const r of requests) {
    if (r.disturbed) continue;
    for (let i = 1; i < r.token_ms.length; i++) gaps.push({ depth: r.prompt_tokens + i, ms: r.token_ms[i] - r.token_ms[i - 1] });
  }
  if (gaps.length === 0) return [];
  const lo = Math.min(...gaps.map((g) => g.depth));
  const hi = Math.max(...gaps.map((g) => g.depth));
  const width = Math.max(1, Math.ceil((hi - lo + 1) / bins));
  const byBin = new Map<number, number[]>();
  for (const g of gaps) {
    const bin = Math.floor((g.depth - lo) / width);
    byBin.set(bin, [...(byBin.get(bin) ?? []), g.ms]);
  }
  return [...byBin.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bin, ms]) => {
      const depth = lo + bin * width + Math.floor(width / 2);
      return {
        depth,
        tpot_ms: summarize(ms).p50,
        n: ms.length,
        ceiling_tokens_per_s: decodeCeilingTokensPerS(roofs.read_bandwidth_gbps * 1e9, bytesAtDepth(depth)),
      };
    });
}

/** Dispatches of one row's phases: its prefill (every chunk) and one decode step. */
export interface PhaseDispatches {
  prefill: number;
  decode: number;
}

/**
 * Roofline verdicts of prefill and decode for one row (GPU time when measured, else host time);
 * with `dispatches` and the launch roof, the floor counts the launches too.
 */
export function phaseVerdicts(row: LatencyRow, costs: LengthCosts, roofs: Roofs, dispatches?: PhaseDispatches): { prefill: Verdict; decode: Verdict | null } {
  const r = rooflineOf(roofs);
  const prefillMs = row.gpu_prefill_ms ?? row.ttft.p50;
  const decodeMs = row.tpot ? row.tpot.p50 : null;
  return {
    prefill: verdict({ ...costs.prefill, ms: prefillMs, dispatches: dispatches?.prefill }, r),
    decode: decodeMs !== null ? verdict({ ...costs.decodeStep, ms: decodeMs, dispatches: dispatches?.decode }, r) : null,
  };
}

/** Where one decode token's time goes (docs/METRICS.md § Decode waterfall), ms. */
export interface DecodeWaterfall {
  prompt_tokens: number;
  tpot_ms: number;
  /** Dispatches × the launch roof. */
  launch_ms: number;
  /** The step's bytes (weights, KV cache, activations) at the read roof. */
  stream_ms: number;
  /** GPU time beyond launch + stream: the kernels' own inefficiency (0 when they are within it). */
  kernel_ms: number;
  /** TPOT − GPU time: submission, the readback and the host's own work. */
  host_ms: number;
  /** The part of host_ms one submit-and-read round trip accounts for. */
  readback_ms: number;
  /** Set when launch + stream exceed the step's GPU time: the launch probe over-reads what these dispatches cost, so the split is not drawn. */
  floors_exceed_gpu?: boolean;
}

/**
 * The decode waterfall of one row: a sequential model, TPOT = launch + stream + kernel + host, with
 * the launch and stream floors first; null without a TPOT, GPU timestamps, or the launch roof.
 */
export function decodeWaterfall(row: LatencyRow, roofs: Roofs, decodeDispatches: number): DecodeWaterfall | null {
  if (!row.tpot || row.gpu_decode_ms === null || !roofs.launch) return null;
  const tpot = row.tpot.p50;
  const gpu = Math.min(row.gpu_decode_ms, tpot);
  const launch = (decodeDispatches * roofs.launch.dispatch_us) / 1000;
  const stream = (1000 * row.decode_bytes_per_token) / (roofs.read_bandwidth_gbps * 1e9);
  const host = Math.max(0, tpot - gpu);
  const exceed = launch + stream > gpu * 1.0001;
  return {
    ...(exceed ? { floors_exceed_gpu: true } : {}),
    prompt_tokens: row.prompt_tokens,
    tpot_ms: tpot,
    launch_ms: launch,
    stream_ms: stream,
    kernel_ms: Math.max(0, gpu - launch - stream),
    host_ms: host,
    readback_ms: Math.min(host, roofs.launch.roundtrip_us / 1000),
  };
}

/** Profile-mode GPU time by kernel class and phase. */
export interface KernelRow {
  phase: 'prefill' | 'decode';
  kind: KernelClass;
  /** Median over steps of the class's summed time per step, ms. */
  ms_per_step: number;
  /** Share of the phase's summed kernel time. */
  share: number;
  dispatches_per_step: number;
}

export interface KernelSample {
  phase: 'prefill' | 'decode';
  /** Which step of the phase (decode index; 0 for a prefill). */
  step: number;
  kind: KernelClass;
  ns: number;
}

export function kernelBreakdown(samples: readonly KernelSample[]): KernelRow[] {
  const rows: KernelRow[] = [];
  for (const phase of ['prefill', 'decode'] as const) {
    const inPhase = samples.filter((s) => s.phase === phase);
    const steps = new Set(inPhase.map((s) => s.step)).size || 1;
    const total = inPhase.reduce((n, s) => n + s.ns, 0);
    const kinds = [...new Set(inPhase.map((s) => s.kind))];
    for (const kind of kinds) {
      const mine = inPhase.filter((s) => s.kind === kind);
      const perStep = new Map<number, number>();
      for (const s of mine) perStep.set(s.step, (perStep.get(s.step) ?? 0) + s.ns);
      rows.push({
        phase,
        kind,
        ms_per_step: summarize([...perStep.values()]).p50 / 1e6,
        share: mine.reduce((n, s) => n + s.ns, 0) / total,
        dispatches_per_step: mine.length / steps,
      });
    }
  }
  return rows.sort((a, b) => (a.phase === b.phase ? b.share - a.share : a.phase < b.phase ? 1 : -1));
}
