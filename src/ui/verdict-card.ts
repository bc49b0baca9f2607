import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { BenchResult } from '../measure/schema.ts';
import { accuracyHeadline } from '../measure/sections/accuracy.ts';
import { num, pct } from './format.ts';
import { bindingComputeRoof, headline } from './headline.ts';
import { shared } from './styles.ts';

const BOUND_TEXT = { 'memory-bound': 'memory', 'compute-bound': 'compute', 'launch-bound': 'launches', 'overhead-bound': 'overhead' } as const;

/**
 * The verdict on top of every report (live, from a link or a file): the roofs and the two phase
 * rates as big numbers, what bounds each phase, what to try, why a CPU adapter or a tiny model
 * reads as overhead-bound, what the engine's arithmetic cost in accuracy, and one table row per phase and prompt length (phase | time | floor |
 * % of roof | bound) in place of one sentence each.
 */
@customElement('ts-verdict-card')
export class VerdictCard extends LitElement {
  static override styles = [
    shared,
    css`
      .numbers {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(145px, 1fr));
        gap: 12px;
        margin: 0 0 12px;
      }
      .big {
        border: 1px solid var(--border);
        border-radius: 8px;
        padding: 10px 12px;
      }
      .big b {
        display: block;
        font-size: 1.7rem;
        line-height: 1.15;
        font-variant-numeric: tabular-nums;
      }
      .big span {
        font-size: 0.85rem;
      }
      .say {
        font-size: 1.05rem;
        margin: 6px 0;
      }
      td.num,
      th.num {
        text-align: right;
      }
      .waterfall {
        display: flex;
        height: 22px;
        border-radius: 4px;
        overflow: hidden;
        margin: 6px 0 4px;
        border: 1px solid var(--border);
      }
      .waterfall span {
        display: block;
        min-width: 2px;
      }
      .w-launch {
        background: #d97706;
      }
      .w-stream {
        background: #2563eb;
      }
      .w-kernel {
        background: #9333ea;
      }
      .w-host {
        background: #6b7280;
      }
      .key i {
        display: inline-block;
        width: 10px;
        height: 10px;
        margin: 0 4px 0 10px;
        border-radius: 2px;
      }
    `,
  ];
  @property({ attribute: false }) result: BenchResult | null = null;

  /** The first prompt length's decode waterfall as one stacked bar: launch, stream, kernels, host. */
  private waterfall() {
    const w = this.result?.latency?.decode_waterfall?.[0];
    if (!w || !(w.tpot_ms > 0)) return '';
    if (w.floors_exceed_gpu) {
      return html`<p class="muted" id="v-waterfall">
        No decode waterfall: the launch roof (${num(this.result?.ceilings?.launch?.dispatch_us ?? 0)} µs per dispatch) and the bytes at the read roof add up to
        more than a decode step's GPU time here (${num(w.tpot_ms - w.host_ms)} ms), so the launch probe over-reads what these dispatches cost.
      </p>`;
    }
    const parts = [
      ['w-launch', 'launch floor', w.launch_ms],
      ['w-stream', 'bytes at the read roof', w.stream_ms],
      ['w-kernel', 'kernel inefficiency', w.kernel_ms],
      ['w-host', `host (readback ${num(w.readback_ms)} ms)`, w.host_ms],
    ] as const;
    const total = parts.reduce((a, p) => a + p[2], 0) || 1;
    return html`<div id="v-waterfall">
      <p class="say">Where a decode token goes after ${w.prompt_tokens} tokens (${num(w.tpot_ms)} ms):</p>
      <div class="waterfall" role="img" aria-label=${parts.map(([, label, ms]) => `${label} ${num(ms)} ms`).join(', ')}>
        ${parts.map(([cls, label, ms]) => html`<span class=${cls} style="width:${((100 * ms) / total).toFixed(2)}%" title="${label}: ${num(ms)} ms"></span>`)}
      </div>
      <p class="muted key">${parts.map(([cls, label, ms]) => html`<i class=${cls}></i>${label} ${num(ms)} ms (${pct(ms / w.tpot_ms)})`)}</p>
      <p class="muted">
        A sequential model: TPOT = dispatches × launch roof + step bytes ÷ read roof + the kernels' own inefficiency + host time (docs/METRICS.md § Decode
        waterfall).
      </p>
    </div>`;
  }

  /** Beside the speed figures: what the engine's arithmetic cost against the f32 CPU reference. */
  private accuracy() {
    const a = this.result?.accuracy;
    if (!a) return '';
    const { figure, words } = accuracyHeadline(a);
    return html`<div class="big" id="v-accuracy"><b>${figure}</b><span class="muted">${words}</span></div>`;
  }

  /** Under the boxes: the accuracy pass's spread and where greedy decoding parts, then `--agreement llama.cpp`'s figures against the same reference. */
  private agreement() {
    const a = this.result?.accuracy;
    const h = a ? accuracyHeadline(a) : undefined;
    return html`${h?.detail ? html`<p class="muted" id="v-accuracy-detail">${h.detail}</p>` : ''}${
      h?.agreement ? html`<p class="muted" id="v-agreement">${h.agreement}</p>` : ''
    }`;
  }

  override render() {
    const r = this.result;
    if (!r) return html``;
    const h = headline(r);
    const roofs = h.roofs;
    const binding = roofs ? bindingComputeRoof(roofs) : null;
    return html`<div class="numbers">
        ${
          roofs
            ? html`<div class="big" id="v-bandwidth">
                  <b>${num(roofs.bandwidthGBps)} GB/s</b><span class="muted">read bandwidth (streaming read roof)</span>
                </div>
                <div class="big" id="v-compute">
                  <b>${num(roofs.computeGflops)} GFLOP/s</b><span class="muted">${roofs.computeName}; our prefill GEMM reaches ${num(roofs.matmulGflops)}</span>
                </div>`
            : html`<div class="big"><b>…</b><span class="muted">measuring the roofs</span></div>`
        }
        ${
          r.ceilings?.launch
            ? html`<div class="big" id="v-launch">
                <b>${num(r.ceilings.launch.dispatch_us)} µs</b
                ><span class="muted"
                  >per dependent dispatch (launch
                  roof)${
                    r.latency?.dispatches_per_step
                      ? html`; ${r.latency.dispatches_per_step.decode} per decode step =
                        ${num((r.latency.dispatches_per_step.decode * r.ceilings.launch.dispatch_us) / 1000)} ms floor`
                      : ''
                  }</span
                >
              </div>`
            : ''
        }
        ${
          h.decode
            ? html`<div class="big" id="v-decode">
                <b>${num(h.decode.tokensPerS)} tok/s</b
                ><span class="muted"
                  >decode after ${h.decode.promptTokens} tokens —
                  ${h.decode.ofCeiling === null ? '' : `${pct(h.decode.ofCeiling)} of the bandwidth ceiling`}</span
                >
              </div>`
            : ''
        }
        ${
          h.prefill
            ? html`<div class="big" id="v-prefill">
                <b>${pct(h.prefill.ofCompute)}</b
                ><span class="muted"
                  >of the compute roof in prefill of ${h.prefill.promptTokens} tokens (${num(h.prefill.gflops)} GFLOP/s; ${pct(h.prefill.ofMatmul)} of the
                  matmul kernel's)</span
                >
              </div>`
            : ''
        }
        ${this.accuracy()}
      </div>
      ${this.agreement()} ${h.bounds ? html`<p class="say" id="v-bounds"><strong>${h.bounds}</strong></p>` : ''}
      ${h.advice ? html`<p class="say" id="v-advice"><span class="muted">Next:</span> ${h.advice}</p>` : ''}
      ${h.overheadWhy ? html`<p class="muted" id="v-why">Why overhead: ${h.overheadWhy}</p>` : ''}
      ${
        binding && roofs && binding.name === 'tiled matmul kernel'
          ? html`<p class="muted">
              Two compute roofs: the ${roofs.computeName} (${num(roofs.computeGflops)} GFLOP/s) is the roofline's and the verdicts'; our prefill GEMM reaches
              ${num(roofs.matmulGflops)} GFLOP/s, so for prefill the kernel binds first.
            </p>`
          : ''
      }
      ${this.waterfall()}
      ${
        h.rows.length
          ? html`<div class="scroll" tabindex="0" role="region" aria-label="Roofline verdicts by phase">
                <table id="phase-table">
                  <thead>
                    <tr>
                      <th scope="col">Phase</th>
                      <th scope="col" class="num">Time</th>
                      <th scope="col" class="num">Floor</th>
                      <th scope="col" class="num">% of roof</th>
                      <th scope="col">Bound</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${h.rows.map(
                      (x) =>
                        html`<tr>
                          <th scope="row">${x.phase === 'prefill' ? `prefill ${x.promptTokens}` : `decode @ ${x.promptTokens}`}</th>
                          <td class="num">${num(x.ms)} ms</td>
                          <td class="num">${num(x.floorMs)} ms</td>
                          <td class="num">${pct(x.ofRoof)}</td>
                          <td>${BOUND_TEXT[x.bound]} <span class="muted">(${x.side} side)</span></td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              <p class="muted">
                Time: prefill of the whole prompt, or one decode step (median). Floor = max(FLOPs ÷ FMA peak, bytes ÷ bandwidth, dispatches × launch roof), the
                fastest the roofline allows; % of roof = floor ÷ time. Launch-bound: the dispatches' fixed cost is the largest term. Below 50% the phase is
                overhead-bound: synchronisation, the host or kernel quality set the time. Side: which side of the ridge point the phase's intensity sits on.
              </p>`
          : ''
      }`;
  }
}
