import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { BenchResult } from '../measure/schema.ts';
import { compareResults, comparisonTitle, type ComparisonRow } from '../share/compare.ts';
import { encodeComparison } from '../share/compare.ts';
import { num, pct, ratio } from './format.ts';
import { differences, noiseCall, spreadOf } from './differences.ts';
import { humanDate } from './headline.ts';
import { linkFor } from './share-bar.ts';
import { toShown, type ShownError } from './session.ts';
import { shared } from './styles.ts';

function device(r: BenchResult): string {
  const a = r.environment.adapter;
  return [a.vendor, a.architecture, a.description].filter(Boolean).join(' · ') || 'unknown adapter';
}

const value = (row: ComparisonRow, x: number) => (row.unit === 'of ceiling' || row.unit === 'share' ? pct(x) : `${num(x)} ${row.unit}`);

/**
 * Two reports side by side: what each measured and what differs between them (model,
 * quantization, mode, settings, device, browser), then every metric both have with the ratio
 * B / A and which side is better (higher- or lower-is-better per metric) — or "within noise" when
 * the runs' own ranges overlap — and a `#c=` link to share it.
 *
 * @fires link-made - detail: the `#c=…` fragment just made.
 * @fires close - the visitor closed the comparison.
 */
@customElement('ts-compare-view')
export class CompareView extends LitElement {
  static override styles = [
    shared,
    css`
      .better {
        font-weight: 600;
        color: var(--ok);
      }
      .diffs {
        margin: 10px 0;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        margin-top: 10px;
      }
      input[readonly] {
        width: 100%;
        font-family: var(--mono);
        font-size: 0.8rem;
      }
    `,
  ];
  @property({ attribute: false }) a: { label: string; result: BenchResult } | null = null;
  @property({ attribute: false }) b: { label: string; result: BenchResult } | null = null;
  @state() private link: string | null = null;
  @state() private error: ShownError | null = null;

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('a') || changed.has('b')) this.link = null;
  }

  private async share(): Promise<void> {
    try {
      const fragment = await encodeComparison(this.a!.result, this.b!.result);
      this.link = linkFor(fragment);
      this.error = null;
      this.dispatchEvent(new CustomEvent<string>('link-made', { detail: fragment, bubbles: true, composed: true }));
    } catch (e) {
      this.error = toShown(e);
    }
  }

  override render() {
    const { a, b } = this;
    if (!a || !b) return html``;
    const rows = compareResults(a.result, b.result).map((r) => ({ ...r, call: noiseCall(r, spreadOf(a.result, r), spreadOf(b.result, r)) }));
    const diffs = differences(a.result, b.result);
    const side = (x: typeof a) => [x.label, x.result.model?.name ?? 'roofs only', device(x.result), humanDate(x.result.created_at)];
    const [sa, sb] = [side(a), side(b)];
    return html`${
        diffs.length
          ? html`<div class="diffs" id="differences">
              <strong>What differs:</strong>
              <ul>
                ${diffs.map((d) => html`<li><strong>${d.what}</strong>: A ${d.a} · B ${d.b}</li>`)}
              </ul>
            </div>`
          : html`<p class="diffs" id="differences">
              <strong>What differs:</strong> nothing recorded — same model, quantization, mode, settings, device and browser.
            </p>`
      }
      <div class="scroll" tabindex="0" role="region" aria-label="The two reports">
        <table>
          <thead>
            <tr>
              <th scope="col"></th>
              <th scope="col">A</th>
              <th scope="col">B</th>
            </tr>
          </thead>
          <tbody>
            ${['Report', 'Model', 'Device', 'Measured at'].map(
              (name, i) =>
                html`<tr>
                  <th scope="row">${name}</th>
                  <td>${sa[i]}</td>
                  <td>${sb[i]}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${
        rows.length === 0
          ? html`<p class="muted">These two reports have no metric in common (for latency, the same prompt length is needed).</p>`
          : html`<div class="scroll" tabindex="0" role="region" aria-label="Metrics compared">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Metric</th>
                      <th scope="col" class="num">Prompt</th>
                      <th scope="col" class="num">A</th>
                      <th scope="col" class="num">B</th>
                      <th scope="col" class="num">B ÷ A</th>
                      <th scope="col">Better</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${rows.map(
                      (r, i) =>
                        html`${
                            i === 0 || rows[i - 1].section !== r.section
                              ? html`<tr>
                                  <th scope="rowgroup" colspan="6">${comparisonTitle(r.section)}</th>
                                </tr>`
                              : ''
                          }
                          <tr>
                            <th scope="row">
                              ${r.metric} <span class="muted">(${r.direction === 'higher-is-better' ? 'higher is better' : 'lower is better'})</span>
                            </th>
                            <td class="num">${r.prompt_tokens ?? ''}</td>
                            <td class="num">${value(r, r.a)}</td>
                            <td class="num">${value(r, r.b)}</td>
                            <td class="num">${ratio(r.ratio)}</td>
                            <td class=${r.call === 'a' || r.call === 'b' ? 'better' : 'muted'}>
                              ${r.call === 'a' || r.call === 'b' ? r.call.toUpperCase() : r.call}
                            </td>
                          </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              <p class="muted">
                Ratio = B ÷ A. “Better” follows each metric’s direction (higher bandwidth and tokens/s, lower latency); within 1% reads as the same, and “within
                noise” when each run’s own repetitions spread over the other’s (their min–max ranges overlap).
              </p>`
      }
      <div class="row">
        <button @click=${this.share}>Share comparison link</button>
        <button class="secondary" @click=${() => this.dispatchEvent(new CustomEvent('close', { bubbles: true, composed: true }))}>Close comparison</button>
      </div>
      ${this.link ? html`<label role="status">Comparison link (${this.link.length} characters)<input readonly .value=${this.link} /></label>` : ''}
      ${this.error ? html`<div class="banner error" role="alert"><strong>${this.error.message}</strong> ${this.error.hint}</div>` : ''}`;
  }
}
