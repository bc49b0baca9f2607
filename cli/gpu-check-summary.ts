/** The GPU check's one line per model (pure, so it is unit-tested). */
import type { LatencySection } from '../src/measure/latency.ts';
import { computeRoof, type Ceilings } from '../src/measure/schema.ts';

/** Three significant figures, without exponents: 0.646, 1.47, 50000. */
const gflops = (x: number) => (x >= 100 ? x.toFixed(0) : x.toPrecision(3));

/**
 * Decode from the sweep's shortest prompt (tokens/s, its fraction of the read-roof ceiling and, where
 * measured, of the read timed beside its requests; with the launch roof the launch floor's share of
 * its TPOT, then the rest of the decode waterfall: the bytes at the read roof, the kernels' own
 * inefficiency and the host); prefill from its longest (tokens/s and achieved GFLOP/s over the
 * compute roof the report uses: computeRoof, the faster FMA peak).
 */
export function summaryLine(
  name: string,
  latency: Pick<LatencySection, 'rows'> & Partial<Pick<LatencySection, 'dispatches_per_step' | 'decode_waterfall'>>,
  ceilings: Pick<Ceilings, 'f16_gflops' | 'f32_gflops'> & Partial<Pick<Ceilings, 'launch'>>,
): string {
  const rows = [...latency.rows].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
  const decodeRow = rows[0];
  const prefillRow = rows[rows.length - 1];
  const compute = computeRoof(ceilings);
  const decode =
    decodeRow.decode_efficiency === null
      ? 'decode n/a'
      : `decode ${decodeRow.decode_tokens_per_s!.toFixed(1)} tok/s = ${decodeRow.decode_efficiency.toPrecision(3)} of the read roof (ceiling ${decodeRow.decode_ceiling_tokens_per_s.toFixed(0)} tok/s${
          decodeRow.decode_of_read_beside != null ? `; ${decodeRow.decode_of_read_beside.toPrecision(3)} of the read timed beside it` : ''
        })`;
  const launch =
    ceilings.launch && latency.dispatches_per_step && decodeRow.tpot
      ? `; launch floor ${latency.dispatches_per_step.decode} dispatches × ${ceilings.launch.dispatch_us.toPrecision(3)} µs = ${((latency.dispatches_per_step.decode * ceilings.launch.dispatch_us) / 1000 / decodeRow.tpot.p50).toFixed(3)} of TPOT`
      : '';
  // The rest of that TPOT, from the decode waterfall of the same row: whose time it is beyond the launches.
  const w = latency.decode_waterfall?.find((x) => x.prompt_tokens === decodeRow.prompt_tokens);
  const share = (ms: number) => (ms / w!.tpot_ms).toFixed(3);
  const rest =
    w && launch && !w.floors_exceed_gpu ? `, stream at the read roof ${share(w.stream_ms)}, kernels ${share(w.kernel_ms)}, host ${share(w.host_ms)}` : '';
  const prefill = `prefill ${prefillRow.prompt_tokens} tokens ${prefillRow.prefill_tokens_per_s.toFixed(0)} tok/s = ${(prefillRow.prefill_gflops / compute.gflops).toFixed(3)} of the ${compute.name} (${gflops(prefillRow.prefill_gflops)} of ${gflops(compute.gflops)} GFLOP/s)`;
  return `${name}: ${decode}${launch}${rest}; ${prefill}`;
}
