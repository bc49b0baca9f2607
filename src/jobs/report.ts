/** Plain-text tables for the CLI (pure functions of a result). */
import { formatLlamaBenchTable } from '../measure/metrics.ts';
import { formatServeSummary } from '../serve/metrics.ts';
import type { BenchResult, CeilingKey, Ceilings } from '../measure/schema.ts';

const CEILING_LABELS: Record<CeilingKey, string> = {
  read_bandwidth_gbps: 'streaming read',
  copy_bandwidth_gbps: 'read+write copy kernel',
  copy_buffer_to_buffer_gbps: 'copyBufferToBuffer',
  f32_gflops: 'f32 FMA',
  f16_gflops: 'f16 FMA',
  matmul_f32_gflops: 'prefill GEMM (f32)',
};

function fmt(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** A fixed-width table: columns padded to their widest cell. */
export function table(header: string[], rows: string[][], rightAlign: boolean[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAlign[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatCeilings(c: Ceilings): string {
  const rows = (Object.keys(CEILING_LABELS) as CeilingKey[]).map((key) => {
    const m = c.measurements[key];
    if (!m) return [CEILING_LABELS[key], 'n/a', '', '', '', 'not supported on this device'];
    return [CEILING_LABELS[key], `${fmt(m.value)} ${m.unit}`, `${fmt(m.min)}–${fmt(m.max)}`, String(m.n), m.clock, m.shape];
  });
  const ratio = (k: CeilingKey) => (c[k] !== null ? (c[k]! / c.copy_buffer_to_buffer_gbps).toFixed(2) : 'n/a');
  return [
    table(['roof', 'median', 'min–max', 'n', 'clock', 'shape'], rows, [false, true, true, true]),
    '',
    `Working set ${(c.working_set_bytes / 2 ** 20).toFixed(0)} MiB; GB/s = 1e9 bytes/s counting bytes read + written.`,
    `Against copyBufferToBuffer: streaming read ×${ratio('read_bandwidth_gbps')}, copy kernel ×${ratio('copy_bandwidth_gbps')}.`,
    `Ridge point (f32 FMA peak / read roof): ${(c.f32_gflops / c.read_bandwidth_gbps).toFixed(2)} FLOP/byte; the prefill GEMM reaches ${((c.matmul_f32_gflops / c.f32_gflops) * 100).toFixed(0)}% of that peak.`,
  ].join('\n');
}

export function formatEnvironment(r: BenchResult): string {
  const e = r.environment;
  const a = e.adapter;
  const name = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ') || 'unknown adapter';
  return [
    `Adapter: ${name}${a.isFallbackAdapter ? ' (fallback adapter)' : ''}${e.cpu_adapter ? ' — a CPU implementation: numbers describe this CPU, not a GPU' : ''}`,
    `Runtime: ${e.runtime} — ${e.user_agent}`,
    `Features: ${[...e.features, ...(e.wgsl_language_features ?? [])].join(', ') || 'none'}${e.disabled_features.length ? ` (disabled: ${e.disabled_features.join(', ')})` : ''}`,
  ].join('\n');
}

const ms = (x: number | null | undefined, digits = 2) => (x === null || x === undefined ? '—' : x.toFixed(digits));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);

export function formatModel(r: BenchResult): string {
  const m = r.model;
  if (!m) return '';
  const cold = r.cold_start;
  const size = m.weight_bytes >= 2 ** 30 ? `${(m.weight_bytes / 2 ** 30).toFixed(2)} GiB` : `${(m.weight_bytes / 2 ** 20).toFixed(1)} MiB`;
  const lines = [
    `Model: ${m.name} — ${m.architecture}, ${(m.parameters / 1e6).toFixed(1)} M parameters, ${m.quantization}, ${size} of weights, ${m.kv_cache ?? 'f32'} KV cache — ${m.label}`,
  ];
  if (cold)
    lines.push(
      `Cold start: parse ${ms(cold.parse_ms, 1)} ms, ${m.synthetic ? 'generate' : 'upload'} weights ${ms(cold.upload_ms, 1)} ms, ${cold.autotune_ms !== undefined ? `tune kernel shapes ${ms(cold.autotune_ms, 1)} ms, ` : ''}compile pipelines ${ms(cold.compile_ms, 1)} ms`,
    );
  const shapes = r.kernel_shapes;
  if (shapes)
    lines.push(
      `Kernel shapes: ${shapes.source === 'autotuned' ? `autotuned for ${Object.keys(shapes.linear).length} linear problems` : `static (${shapes.note ?? "select.ts's defaults"})`}`,
    );
  return lines.join('\n');
}

export function formatGeneration(r: BenchResult): string {
  const g = r.generation;
  if (!g) return '';
  const body = g.text !== null ? g.text : `token ids: ${g.token_ids.join(' ')}`;
  return [`Generated ${g.token_ids.length} tokens from a ${g.prompt_token_ids.length}-token prompt${g.note ? ` (${g.note})` : ''}:`, body].join('\n');
}

/** prompt, out, n, TTFT p50/p99, TPOT p50/p99, prefill tok/s: the cells both engines' latency tables start with. */
function timingCells(row: import('../measure/latency-summary.ts').TimingRow): string[] {
  return [
    String(row.prompt_tokens),
    String(row.output_tokens),
    String(row.n),
    ms(row.ttft.p50),
    ms(row.ttft.p99),
    ms(row.tpot?.p50),
    ms(row.tpot?.p99),
    row.prefill_tokens_per_s.toFixed(1),
  ];
}

/** The length-stratified table, the TPOT-vs-depth curve, the kernel breakdown and the verdicts. */
export function formatLatency(r: BenchResult): string {
  const l = r.latency;
  if (!l || !l.rows) return '';
  const rows = l.rows.map((row) => [
    ...timingCells(row),
    row.prefill_gflops.toFixed(2),
    pct(row.prefill_of_matmul_roof),
    row.decode_tokens_per_s === null ? '—' : row.decode_tokens_per_s.toFixed(1),
    ms(row.gpu_decode_ms, 3),
    ms(row.host_overhead_ms, 3),
    row.decode_bandwidth_gbps === null ? '—' : row.decode_bandwidth_gbps.toFixed(2),
    pct(row.decode_efficiency),
  ]);
  const out = [
    `Latency by prompt length (host clock; n requests each; GPU time from ${l.gpu_clock === 'gpu-timestamp' ? 'timestamp queries' : 'the host clock'}):`,
    table(
      [
        'prompt',
        'out',
        'n',
        'TTFT p50',
        'TTFT p99',
        'TPOT p50',
        'TPOT p99',
        'prefill tok/s',
        'prefill GFLOP/s',
        'of matmul roof',
        'decode tok/s',
        'GPU ms/tok',
        'host ms/tok',
        'decode GB/s',
        'of read roof',
      ],
      rows,
      rows[0]?.map(() => true),
    ),
    'TTFT = first token − request start; TPOT = (E2EL − TTFT)/(N_out − 1) (vLLM, MLPerf); ms. p99 of fewer than 20 samples is close to the maximum.',
    'decode GB/s = bytes a decode step must read (weights + scales + KV cache + activations, from the kernels\' cost models) / TPOT; "of read roof" = that / streaming-read bandwidth.',
  ];
  if (l.dispatches_per_step)
    out.push(`Dispatches per step (from the recorded programs): prefill ${l.dispatches_per_step.prefill}, decode ${l.dispatches_per_step.decode}.`);
  if (l.cold_start)
    out.push(
      `First request (cold): TTFT ${ms(l.cold_start.first_ttft_ms)} ms at ${l.cold_start.first_prompt_tokens} tokens vs warm median ${ms(l.cold_start.warm_ttft_ms)} ms.`,
    );
  if (l.depth_curve?.length) {
    out.push('', 'TPOT by context depth (median ITL of the steps at that depth; ceiling = read roof / bytes per token):');
    out.push(
      table(
        ['depth', 'TPOT ms', 'n', 'ceiling tok/s', 'observed tok/s'],
        l.depth_curve.map((d) => [String(d.depth), ms(d.tpot_ms, 3), String(d.n), d.ceiling_tokens_per_s.toFixed(0), (1000 / d.tpot_ms).toFixed(1)]),
        [true, true, true, true, true],
      ),
    );
  }
  if (l.kernels?.length) {
    const inflation = (phase: 'prefill' | 'decode', headline: number | null | undefined) => {
      const span = l.profile_step_ms?.[phase];
      return span && headline ? `${phase} step ${ms(span, 3)} ms profiled vs ${ms(headline, 3)} ms unprofiled (×${(span / headline).toFixed(1)})` : '';
    };
    const first = l.rows[0];
    out.push('', 'GPU time per step by kernel class (profile mode: one timed pass per kernel — it perturbs timing, so these are never in the numbers above):');
    out.push(`  ${[inflation('prefill', first?.gpu_prefill_ms), inflation('decode', first?.gpu_decode_ms)].filter(Boolean).join('; ')}`);
    out.push(
      table(
        ['phase', 'kernel class', 'ms/step', 'share', 'dispatches/step'],
        l.kernels.map((k) => [k.phase, k.kind, ms(k.ms_per_step, 3), pct(k.share), k.dispatches_per_step.toFixed(0)]),
        [false, false, true, true, true],
      ),
    );
  }
  if (l.verdicts?.length) {
    out.push('', 'Roofline verdict (roofs: streaming-read bandwidth and the f32 FMA peak):');
    for (const v of l.verdicts) {
      out.push(`  prompt ${v.prompt_tokens}: prefill — ${v.prefill.sentence}`);
      if (v.decode) out.push(`  prompt ${v.prompt_tokens}: decode — ${v.decode.sentence}`);
    }
  }
  return out.join('\n');
}

export function formatLlamaBench(r: BenchResult): string {
  const rows = r.llama_bench;
  if (!rows?.length) return '';
  return `llama-bench (pp: prompt tokens/s; tg: generated tokens/s; mean ± sample std of ${rows[0].samples.length} repetitions):\n${formatLlamaBenchTable(rows)}`;
}

/** vLLM's summary, then SLO attainment, cost, the decode roofline by batch, the sweeps. */
export function formatServe(r: BenchResult): string {
  const s = r.serve;
  if (!s?.run) return '';
  const run = s.run;
  const out = [formatServeSummary(run.result, { percentileMetrics: ['ttft', 'tpot', 'itl', 'e2el'], percentiles: [90, 95, 99] }).trimEnd()];
  const settings = s.settings;
  const slo = Object.entries(settings?.slo ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ≤ ${v} ms`)
    .join(', ');
  if (run.slo_attainment !== null)
    out.push(`SLO attainment (${slo}): ${pct(run.slo_attainment)} of ${run.result.completed + run.result.failed} requests (errors count against it).`);
  out.push(`Error rate: ${pct(run.error_rate)}.`);
  if (s.cost) {
    out.push(
      `Cost at $${settings?.dollars_per_hour}/h: $${s.cost.dollarsPer1kOutputTokens.toFixed(5)} per 1k output tokens, $${s.cost.dollarsPer1kTotalTokens.toFixed(5)} per 1k total tokens` +
        (s.cost.joulesPerOutputToken !== undefined ? `; ${s.cost.joulesPerOutputToken.toFixed(3)} J per output token at ${settings?.watts} W.` : '.'),
    );
  }
  if (run.decode_roofline.length) {
    out.push('', 'Decode steps by batch size (steps that only decoded; bytes and FLOPs from the cost models):');
    out.push(
      table(
        ['batch', 'steps', 'step ms', 'FLOP/byte', 'GB/s', 'GFLOP/s', 'bound'],
        run.decode_roofline.map((d) => [
          String(d.batch),
          String(d.steps),
          ms(d.step_ms, 3),
          d.intensity.toFixed(2),
          (d.verdict.achievedBytesPerS / 1e9).toFixed(2),
          (d.verdict.achievedFlopsPerS / 1e9).toFixed(2),
          d.verdict.bound,
        ]),
        [true, true, true, true, true, true, false],
      ),
    );
  }
  if (s.batch_sweep?.length) {
    out.push('', 'Batch-size sweep (all requests at t = 0):');
    out.push(
      table(
        ['max batch', 'output tok/s', 'req/s', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'decode GB/s', 'of read roof', 'bound'],
        s.batch_sweep.map((b) => [
          String(b.batch),
          b.output_throughput.toFixed(1),
          b.request_throughput.toFixed(2),
          ms(b.median_ttft_ms),
          ms(b.p99_ttft_ms),
          ms(b.median_tpot_ms),
          ms(b.p99_tpot_ms),
          b.decode ? (b.decode.verdict.achievedBytesPerS / 1e9).toFixed(2) : '—',
          b.decode ? pct(b.decode.verdict.bandwidthShare) : '—',
          b.decode?.verdict.bound ?? '—',
        ]),
        [true, true, true, true, true, true, true, true, true, false],
      ),
    );
  }
  if (s.rate_sweep) {
    const c = s.rate_sweep;
    out.push(
      '',
      `Capacity (highest rate with ≥ ${pct(c.target)} of requests within the SLOs): ${c.rate === null ? 'none — even the lowest rate missed' : `${c.rate.toFixed(2)} req/s${c.status === 'above-range' ? ' or more' : ''}`}.`,
    );
    out.push(
      table(
        ['rate req/s', 'attainment'],
        [...c.probes].sort((a, b) => a.rate - b.rate).map((p) => [p.rate.toFixed(2), pct(p.attainment)]),
        [true, true],
      ),
    );
  }
  return out.join('\n');
}

/** Flagged requests listed one per line; the rest are counted. */
const FLAGGED_SHOWN = 8;
const ratio = (x: number | null) => (x === null ? '—' : `×${x.toFixed(2)}`);
const signedPct = (x: number | undefined) => (x === undefined ? '—' : `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

/** WebLLM's rows (our protocol and clock), where WebLLM's own statistics disagree, and the side-by-side. */
export function formatWebLLM(r: BenchResult): string {
  const w = r.webllm;
  if (!w?.rows) return '';
  const rows = w.rows.map((row) => [
    ...timingCells(row),
    row.decode_tokens_per_s === null ? '—' : row.decode_tokens_per_s.toFixed(1),
    row.decode_bandwidth_gbps === null ? '—' : row.decode_bandwidth_gbps.toFixed(2),
    pct(row.decode_efficiency),
  ]);
  const cost = w.cost_source;
  const out = [
    `WebLLM ${w.model.id} (${w.model.quantization}; ~${Math.ceil(w.model.vramMB)} MB GPU memory by WebLLM's estimate), latency by prompt length (host clock, token-id prompts, our protocol):`,
    table(
      ['prompt', 'out', 'n', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'prefill tok/s', 'decode tok/s', 'decode GB/s', 'of read roof'],
      rows,
      rows[0]?.map(() => true),
    ),
    cost
      ? `decode GB/s is an estimate: bytes per token from tokenscope's cost model of ${cost.model_id} (${cost.quantization}); WebLLM's kernels and ${w.model.quantization} weights move other bytes.`
      : 'WebLLM reports no bytes or FLOPs and no tokenscope model of its family ran in this job, so the byte-derived columns are empty.',
    '',
    w.flagged_count === 0
      ? `WebLLM's own statistics agree with our clock within 15% on all ${w.comparisons.length} requests.`
      : `WebLLM's own statistics disagree with our clock by more than 15% on ${w.flagged_count} of ${w.comparisons.length} requests (ours vs WebLLM's):`,
  ];
  const flagged = w.comparisons.filter((c) => c.flagged.length > 0);
  for (const c of flagged.slice(0, FLAGGED_SHOWN)) {
    out.push(
      `  prompt ${c.prompt_tokens}, repetition ${c.rep + 1}: ${c.flagged.map((m) => `${m} ${ms(c.ours[m])} vs ${ms(c.webllm[m])} (${signedPct(c.disagreement[m])})`).join('; ')}`,
    );
  }
  if (flagged.length > FLAGGED_SHOWN) out.push(`  … and ${flagged.length - FLAGGED_SHOWN} more (all in the JSON's webllm.comparisons).`);
  const s = r.side_by_side;
  if (s) {
    out.push('', `Side by side, tokenscope ${s.tokenscope_model} vs WebLLM ${s.webllm_model} (medians; × = WebLLM ÷ tokenscope):`);
    out.push(
      table(
        ['prompt', 'TTFT ms', 'WebLLM', '×', 'TPOT ms', 'WebLLM', '×', 'prefill tok/s', 'WebLLM', '×', 'decode tok/s', 'WebLLM', '×'],
        s.rows.map((x) => [
          String(x.prompt_tokens),
          ...(['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'] as const).flatMap((m) => [
            ms(x.tokenscope[m]),
            ms(x.webllm[m]),
            ratio(x.ratio[m]),
          ]),
        ]),
        new Array(13).fill(true),
      ),
    );
    const decode = s.points.filter((p) => p.phase === 'decode');
    if (decode.length) {
      out.push('', "Decode on the roofline (WebLLM's bytes and FLOPs estimated from tokenscope's cost model):");
      out.push(
        table(
          ['engine', 'prompt', 'FLOP/byte', 'GFLOP/s', 'GB/s'],
          decode.map((p) => [
            p.estimate ? `${p.engine} (est.)` : p.engine,
            String(p.prompt_tokens),
            p.intensity.toFixed(2),
            p.gflops.toFixed(2),
            p.gbps.toFixed(2),
          ]),
          [false, true, true, true, true],
        ),
      );
    }
    out.push('', 'What differs between the two runs:', ...s.differences.map((d) => `  - ${d}`));
  }
  return out.join('\n');
}
