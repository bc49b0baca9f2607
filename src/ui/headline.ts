/**
 * The verdict card's content, as a pure function of a result: the few numbers a visitor needs,
 * one sentence on what bounds each phase, one on what to try, and why a phase reads as
 * overhead-bound (the decode waterfall's largest part where there is one). Pure (no Lit), so the
 * words are unit-tested.
 *
 * The roofs are the roofline's (one truth, see {@link roofsOf}): streaming-read bandwidth and the
 * faster FMA peak (f32, or f16 where that is faster); the engine's prefill GEMM (the larger of its two measured roofs, prefillGemmRoof) is a
 * second, lower compute roof for prefill, shown beside.
 */
import type { Bound, Verdict } from '../measure/roofline.ts';
import { computeRoof, prefillGemmRoof, type BenchResult, type Ceilings, type FmaPeak } from '../measure/schema.ts';
import type { DecodeWaterfall } from '../measure/latency-summary.ts';
import type { LatencyView } from './series.ts';
import { fixed, precision } from './format.ts';

/** The compute and bandwidth roofs every view of a report uses (roofline, verdicts, what-if). */
export interface ReportRoofs {
  bandwidthGBps: number;
  /** The compute roof (computeRoof: the faster FMA peak): the roofline's flat roof and the verdicts'. */
  computeGflops: number;
  /** Which FMA peak it is. */
  computeName: FmaPeak['name'];
  /**
   * What the engine's own prefill GEMM reaches: the roof prefill meets in practice, the larger of the
   * f32-weight and (where measured) the 8-bit-activation roof (prefillGemmRoof).
   */
  matmulGflops: number;
  /** Ridge point, FLOP/byte, of bandwidth and the FMA peak. */
  ridge: number;
}

export function roofsOf(c: Ceilings): ReportRoofs {
  const compute = computeRoof(c);
  return {
    bandwidthGBps: c.read_bandwidth_gbps,
    computeGflops: compute.gflops,
    computeName: compute.name,
    matmulGflops: prefillGemmRoof(c).gflops,
    // A plain quotient, not roofline.ts's ridgePoint (which refuses a zero roof): a report with a zero read roof still renders and says what it cannot draw.
    ridge: compute.gflops / c.read_bandwidth_gbps,
  };
}

/** Which compute roof binds first: the lower of the FMA peak and the matmul kernel. */
export function bindingComputeRoof(r: ReportRoofs): { name: ReportRoofs['computeName'] | 'tiled matmul kernel'; gflops: number } {
  return r.matmulGflops < r.computeGflops ? { name: 'tiled matmul kernel', gflops: r.matmulGflops } : { name: r.computeName, gflops: r.computeGflops };
}

/** Which side of the ridge point an intensity sits on. */
export function sideOfRidge(intensity: number, ridge: number): 'memory' | 'compute' {
  return intensity <= ridge ? 'memory' : 'compute';
}

export interface PhaseRow {
  phase: 'prefill' | 'decode';
  promptTokens: number;
  /** Measured time of the phase (prefill: the whole prompt; decode: one step), ms. */
  ms: number;
  /** Roofline floor, ms. */
  floorMs: number;
  /** floor ÷ time: the share of the roofline's speed reached. */
  ofRoof: number;
  bound: Bound;
  /** Memory or compute side of the ridge point (where the dot sits on the roofline). */
  side: 'memory' | 'compute';
}

export interface Headline {
  roofs: ReportRoofs | null;
  /** Decode tokens/s (1 / median TPOT) at the shortest prompt, and its share of the bandwidth ceiling. */
  decode: { tokensPerS: number; ofCeiling: number | null; promptTokens: number } | null;
  /** Prefill GFLOP/s at the longest prompt, as a share of the FMA peak and of the matmul kernel. */
  prefill: { gflops: number; ofCompute: number; ofMatmul: number; promptTokens: number } | null;
  rows: PhaseRow[];
  /** What bounds each phase, one sentence. */
  bounds: string | null;
  /** What to try, one sentence. */
  advice: string | null;
  /**
   * Why decode (or prefill) reads as overhead-bound: from the decode waterfall where the result has one
   * (which part of a token — launches, the kernels, the host — is largest), else why a CPU adapter or a
   * tiny model does (null when none applies).
   */
  overheadWhy: string | null;
}

/** A prefill at this share of the GEMM kernel's own roof or above is held back by that kernel, not by overhead. */
const PREFILL_AT_KERNEL = 0.5;

/** Below this many parameters a model is "tiny": its steps are too short to hide launch costs. */
export const TINY_PARAMETERS = 50e6;

function phaseRow(phase: 'prefill' | 'decode', promptTokens: number, v: Verdict): PhaseRow {
  return {
    phase,
    promptTokens,
    ms: v.floorMs / v.efficiency,
    floorMs: v.floorMs,
    ofRoof: v.efficiency,
    bound: v.bound,
    side: sideOfRidge(v.intensity, v.ridgePoint),
  };
}

/** The bound most rows of a phase share (ties go to the row with the longest prompt). */
function commonBound(rows: readonly PhaseRow[]): Bound | null {
  if (!rows.length) return null;
  const counts = new Map<Bound, number>();
  for (const r of rows) counts.set(r.bound, (counts.get(r.bound) ?? 0) + 1);
  let best = rows[rows.length - 1].bound;
  for (const [b, n] of counts) if (n > (counts.get(best) ?? 0)) best = b;
  return best;
}

function boundWords(phase: string, bound: Bound | null, side: 'memory' | 'compute' | undefined): string {
  if (!bound) return '';
  if (bound === 'overhead-bound') return `${phase} is overhead-bound: on the ${side ?? 'memory'} side of the ridge, but far below the roof`;
  if (bound === 'launch-bound') return `${phase} is launch-bound: its dispatches' fixed cost outweighs its bytes and FLOPs`;
  return `${phase} is ${bound}`;
}

/** The largest part of a decode token beyond its bandwidth floor, from the card's waterfall (the first: the shortest prompt's). */
export interface DecodeLoss {
  part: 'launch' | 'kernels' | 'host';
  ms: number;
  /** Of the token's TPOT. */
  share: number;
  waterfall: DecodeWaterfall;
}

export function decodeLoss(latency: LatencyView | null): DecodeLoss | null {
  const w = latency?.decode_waterfall?.[0];
  if (!w || !(w.tpot_ms > 0) || w.floors_exceed_gpu) return null;
  const parts: [DecodeLoss['part'], number][] = [
    ['launch', w.launch_ms],
    ['kernels', w.kernel_ms],
    ['host', w.host_ms],
  ];
  const [part, ms] = parts.reduce((a, b) => (b[1] > a[1] ? b : a));
  return { part, ms, share: ms / w.tpot_ms, waterfall: w };
}

const pct = (x: number) => `${fixed(100 * x, x < 0.1 ? 1 : 0)}%`;
const ms = (x: number) => `${x >= 10 ? fixed(x, 1) : precision(x, 2)} ms`;

/** One or two sentences on the largest loss, in the waterfall's own numbers. */
function lossWords(loss: DecodeLoss, latency: LatencyView, dispatchUs: number | undefined, cpu: boolean, tiny: boolean): string {
  const w = loss.waterfall;
  const of = `Of a decode token's ${ms(w.tpot_ms)} after ${w.prompt_tokens} tokens`;
  const dispatches = latency.dispatches_per_step?.decode;
  if (loss.part === 'launch') {
    const count = dispatches !== undefined && dispatchUs !== undefined ? `: ${dispatches} dependent dispatches × ${precision(dispatchUs, 3)} µs` : '';
    return (
      `${of}, the launch floor is the largest part${count} = ${ms(w.launch_ms)} (${pct(loss.share)}).` +
      (cpu ? ' On this CPU implementation of WebGPU every dispatch goes through a software queue.' : '') +
      (tiny ? ' A model this small does less work per kernel than a launch costs.' : '')
    );
  }
  if (loss.part === 'kernels') {
    return (
      `${of}, the kernels' own inefficiency is the largest part: ${ms(w.kernel_ms)} (${pct(loss.share)}) beyond launching them (${pct(w.launch_ms / w.tpot_ms)}) ` +
      `and streaming the step's bytes at the read roof (${pct(w.stream_ms / w.tpot_ms)}).` +
      (cpu
        ? ' This adapter is a CPU implementation of WebGPU: its kernels run on CPU threads, where loads and arithmetic cost far more per byte than on a GPU.'
        : '')
    );
  }
  return `${of}, the host is the largest part: ${ms(w.host_ms)} (${pct(loss.share)}) between GPU steps — submitting the step, reading the token back (${ms(w.readback_ms)} of it) and the runtime's own work (JavaScript, the browser or Node).`;
}

/** The card's numbers and sentences for one result (partial results give what they have). */
export function headline(r: BenchResult): Headline {
  const roofs = r.ceilings ? roofsOf(r.ceilings) : null;
  const latency = (r.latency as LatencyView | undefined) ?? null;
  const rows = [...(latency?.rows ?? [])].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
  const verdicts = [...(latency?.verdicts ?? [])].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
  const phaseRows: PhaseRow[] = [];
  for (const v of verdicts) {
    phaseRows.push(phaseRow('prefill', v.prompt_tokens, v.prefill));
    if (v.decode) phaseRows.push(phaseRow('decode', v.prompt_tokens, v.decode));
  }
  const firstDecode = rows.find((x) => x.decode_tokens_per_s !== null);
  const decode = firstDecode
    ? { tokensPerS: firstDecode.decode_tokens_per_s!, ofCeiling: firstDecode.decode_efficiency, promptTokens: firstDecode.prompt_tokens }
    : null;
  const last = rows[rows.length - 1];
  const prefill =
    last && roofs
      ? {
          gflops: last.prefill_gflops,
          ofCompute: last.prefill_gflops / roofs.computeGflops,
          ofMatmul: last.prefill_gflops / roofs.matmulGflops,
          promptTokens: last.prompt_tokens,
        }
      : null;

  const prefillRows = phaseRows.filter((x) => x.phase === 'prefill');
  const decodeRows = phaseRows.filter((x) => x.phase === 'decode');
  const pb = commonBound(prefillRows);
  const db = commonBound(decodeRows);
  const ps = prefillRows.at(-1)?.side;
  const ds = decodeRows.at(-1)?.side;
  const bounds =
    pb && pb === db && ps === ds
      ? `${boundWords('Prefill and decode', pb, ps).replace(' is ', ' are both ')}.`
      : pb || db
        ? `${[boundWords('Prefill', pb, ps), boundWords(pb ? 'decode' : 'Decode', db, ds)].filter(Boolean).join('; ')}.`
        : null;

  const model = r.model as { parameters?: number } | undefined;
  const tiny = model?.parameters !== undefined && model.parameters < TINY_PARAMETERS;
  const cpu = r.environment.cpu_adapter;
  const loss = db === 'overhead-bound' ? decodeLoss(latency) : null;
  const overheadWhy = loss
    ? lossWords(loss, latency!, r.ceilings?.launch?.dispatch_us, cpu, tiny)
    : (cpu || tiny) && (pb === 'overhead-bound' || db === 'overhead-bound')
      ? [
          cpu ? 'This adapter is a CPU implementation of WebGPU: its kernels run on CPU threads and every dispatch goes through a software queue.' : '',
          tiny
            ? `A model this small (${Math.round((model!.parameters! / 1e6) * 10) / 10} M parameters) does little work per kernel, so fixed per-dispatch costs weigh more than on a large one.`
            : '',
        ]
          .filter(Boolean)
          .join(' ')
      : null;

  let advice: string | null = null;
  if (db || pb) {
    if (loss?.part === 'kernels') {
      advice =
        'The kernels lose the time, not the launches: a per-kernel profile (tick “per-kernel profile” before the run; --profile in the CLI) shows which kernel class holds it.';
    } else if (loss?.part === 'host') {
      advice =
        'Time between GPU steps binds, not the GPU: keep the tab in the foreground and the machine otherwise idle, and compare with the CLI (npm run bench) on the same device.';
    } else if (pb === 'overhead-bound' && db !== 'overhead-bound' && !tiny && prefill && roofs && prefill.ofMatmul >= PREFILL_AT_KERNEL) {
      // Prefill far below the FMA peak but near what our GEMM kernel reaches alone: the kernel, not the launches.
      advice =
        `Prefill reaches ${pct(prefill.ofMatmul)} of what our prefill GEMM does on its own, and that kernel ${pct(roofs.matmulGflops / roofs.computeGflops)} of the ${roofs.computeName}: ` +
        `a faster GEMM kernel would move prefill${db === 'memory-bound' ? '; decode streams the weights, so fewer bytes per weight or batching raises its tokens/s' : ''}.`;
    } else if (db === 'overhead-bound' || pb === 'overhead-bound') {
      advice = tiny
        ? 'Try a larger model (SmolLM2-135M or Llama 3.2 1B) so the work per kernel outgrows the launch cost; on a GPU, compare with WebLLM.'
        : 'Fewer, larger dispatches help most here: fused kernels, a longer prompt per prefill chunk, or batching decode (Serving mode).';
    } else if (db === 'memory-bound') {
      advice = 'Decode streams the weights: fewer bytes per weight (q4_0 instead of q8_0 or f16) or batching several sequences per step raises tokens/s.';
    } else if (db === 'compute-bound' || pb === 'compute-bound') {
      advice = 'Compute binds: a faster matmul kernel (or f16 where the device has it) moves the roof.';
    } else {
      advice = 'Prefill is memory-bound at these prompt lengths: longer prompts reuse each weight more and move it right on the roofline.';
    }
  }
  return { roofs, decode, prefill, rows: phaseRows, bounds, advice, overheadWhy };
}

/** A human date for a report: "3 Dec 2026, 06:27 UTC". */
export function humanDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return 'an unknown date';
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/** "stories15M q4_0 on SwiftShader Device (Subzero)" — the banner's words for a shared report. */
export function reportTitle(r: BenchResult): string {
  const m = r.model as { name?: string; quantization?: string } | undefined;
  const a = r.environment.adapter;
  const device = a.description || [a.vendor, a.architecture].filter(Boolean).join(' ') || 'an unknown device';
  const what = m?.name ? `${m.name}${m.quantization ? ` ${m.quantization}` : ''}` : 'Roofs';
  return `${what} on ${device}`;
}
