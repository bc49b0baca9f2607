import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { shared } from './styles.ts';

/**
 * What is running (the page prefixes "Step k of n" of its phase plan), how far along, and the time
 * elapsed. No ETA is extrapolated from the fraction: the phases are not equally fast per percent;
 * the expected duration is stated before the run from the device's kind and roofs. The step is announced politely.
 */
@customElement('ts-progress')
export class ProgressBar extends LitElement {
  static override styles = [
    shared,
    css`
      progress {
        width: 100%;
        height: 12px;
        accent-color: var(--accent);
      }
      .row {
        display: flex;
        justify-content: space-between;
        gap: 12px;
        font-size: 0.9rem;
      }
    `,
  ];
  @property() step = '';
  @property({ type: Number }) fraction = 0;
  @property({ type: Number }) startedAt = 0;

  override render() {
    const elapsed = (performance.now() - this.startedAt) / 1000;
    const percent = `${(this.fraction * 100).toFixed(0)}%`;
    return html`<div class="row">
        <span aria-live="polite">${this.step}</span>
        <span class="muted">${percent} · ${elapsed.toFixed(0)} s elapsed</span>
      </div>
      <progress max="1" .value=${this.fraction} aria-label="Run progress" aria-valuetext=${`${percent}: ${this.step}`}></progress>`;
  }
}
