import { LitElement, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { roofStatisticText } from '../measure/roof-checks.ts';
import { CEILING_KEYS, computeRoof, NOT_RUN, type CeilingKey, type Ceilings } from '../measure/schema.ts';
import { shared } from './styles.ts';
import { guarded } from './guard.ts';
import { humanDate } from './headline.ts';
import { fixed, precision } from './format.ts';

const LABELS: Record<CeilingKey, [string, string]> = {
  read_bandwidth_gbps: ['Streaming read', 'sums every byte once — closest to what decode does'],
  copy_bandwidth_gbps: ['Copy kernel', 'reads and writes every byte (bytes counted both ways)'],
  copy_buffer_to_buffer_gbps: ['copyBufferToBuffer', "the driver's own copy, for reference"],
  f32_gflops: ['f32 FMA peak', 'independent FMA chains, no memory traffic'],
  f16_gflops: ['f16 FMA peak', 'the same in half precision (needs shader-f16)'],
  matmul_f32_gflops: [
    'Prefill GEMM (f32 weights)',
    "the engine's own linear kernel on an n×n f32 weight; prefill is reported as a share of the larger prefill GEMM roof",
  ],
  matmul_q8_gflops: [
    'Prefill GEMM (8-bit activations)',
    "the engine's own kernel on an n×n q4_0 weight where Q4_0/Q8_0/Q4_K prefill runs with activations rounded to 8 bits (CPU adapters): faster than the f32 one, so it is the prefill roof there",
  ],
};

function fmt(x: number): string {
  return fixed(x, x >= 100 ? 0 : x >= 10 ? 1 : 2);
}

/** The measured roofs (each the best median of consecutive samples lasting 250 ms; older results: of 5, their upper decile or median) with median, spread, sample count, clock and the checks that failed. */
@customElement('ts-roofs-table')
export class RoofsTable extends LitElement {
  static override styles = [shared];
  @property({ attribute: false }) ceilings: Ceilings | null = null;

  override render() {
    return guarded('roofs table', () => this.renderSection());
  }

  private renderSection() {
    const c = this.ceilings;
    if (!c) return html``;
    const compute = computeRoof(c);
    return html`<p class="scroll-hint" aria-hidden="true">Scroll the table sideways for more columns →</p>
      <div class="scroll" tabindex="0" role="region" aria-label="The device's roofs (scrolls sideways)">
        <table>
          <thead>
            <tr>
              <th scope="col">Roof</th>
              <th scope="col" class="num">Roof</th>
              <th scope="col" class="num">Median</th>
              <th scope="col" class="num">Min–max</th>
              <th scope="col" class="num">n</th>
              <th scope="col">Clock</th>
              <th scope="col">Kernel shape</th>
            </tr>
          </thead>
          <tbody>
            ${CEILING_KEYS.map((key) => {
              const m = c.measurements[key];
              const [name, what] = LABELS[key];
              const roof = key !== compute.key ? '' : ` — the compute roof used below${compute.other ? ' (the faster FMA peak)' : ''}`;
              return html`<tr>
                <th scope="row">${name}<br /><span class="muted" style="font-weight:normal;font-size:0.8rem">${what}${roof}</span></th>
                ${
                  m
                    ? html`<td class="num">${fmt(m.value)} ${m.unit}</td>
                        <td class="num">${fmt(m.median ?? m.value)}</td>
                        <td class="num">${fmt(m.min)}–${fmt(m.max)}</td>
                        <td class="num">${m.n}</td>
                        <td>${m.clock === 'gpu-timestamp' ? 'GPU timestamps' : 'host clock'}</td>
                        <td class="mono">${m.shape}</td>`
                    : html`<td colspan="6" class="muted">
                        ${m === undefined ? 'not measured (an older result)' : (NOT_RUN[key] ?? 'not supported on this device')}
                      </td>`
                }
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
      <p class="muted">
        Each roof is ${roofStatisticText(c.measurements.read_bandwidth_gbps.statistic)}, of n after a warm-up; working set
        ${(c.working_set_bytes / 2 ** 20).toFixed(0)} MiB. GB/s = 10⁹ bytes/s.
      </p>
      ${
        c.source
          ? html`<p class="muted" id="roofs-source">
              ${c.source.kind === 'measured' ? 'Measured by this run' : `Reused (${c.source.kind === 'cached' ? 'roofs cache' : 'saved result'} ${c.source.path ?? ''}), measured`}
              ${humanDate(c.source.measured_at)}.
            </p>`
          : ''
      }
      ${(c.consistency?.warnings ?? []).map((w) => html`<p class="banner warn" role="note">${w}</p>`)}
      ${
        c.drift
          ? c.drift.warning
            ? html`<p class="banner warn" role="note" id="roof-drift">${c.drift.warning}</p>`
            : html`<p class="muted" id="roof-drift">
                Read roof re-measured after the model phases: ${precision(c.drift.read_after_gbps, 3)} GB/s (×${fixed(c.drift.ratio, 2)}), within ±15%.
              </p>`
          : ''
      }`;
  }
}
