import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Environment } from '../measure/schema.ts';
import type { ServeSettings } from '../serve/run.ts';
import { parseLengths, setupProblem, type Mode, type ModelPick, type RunSetup } from './setup.ts';
import { shared } from './styles.ts';
import './model-picker.ts';
import './serve-setup.ts';

const MODE_TEXT: Record<Mode, [string, string]> = {
  roofs: ['Roofs only', 'memory bandwidth and compute peaks of this device (a few seconds)'],
  latency: ['Latency sweep', 'TTFT and TPOT at several prompt lengths, the depth curve, the roofline verdicts'],
  'llama-bench': ['llama-bench', 'pp512 and tg128 tokens/s, 5 repetitions, comparable with llama.cpp’s table'],
  serve: ['Serving', 'many requests at once through a batching scheduler: throughput, goodput against latency targets, capacity (vLLM bench serve)'],
};

/**
 * The run form: model, mode and sweep settings, and the one big Run button. The setup itself is
 * owned by the page (properties in, events out).
 *
 * @fires setup-change - detail: the new `RunSetup`.
 * @fires run - the visitor asked to run the current setup.
 */
@customElement('ts-run-setup')
export class RunSetupForm extends LitElement {
  static override styles = [
    shared,
    css`
      .mode {
        display: flex;
        gap: 8px;
        align-items: baseline;
        margin: 4px 0;
      }
      .sweep {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(150px, 1fr));
        gap: 10px 14px;
        align-items: end;
      }
      .check {
        flex-direction: row;
        align-items: center;
        gap: 8px;
        font-weight: normal;
      }
      .go {
        display: flex;
        gap: 12px;
        align-items: center;
        flex-wrap: wrap;
      }
      button.run {
        font-size: 1.1rem;
        padding: 10px 28px;
        font-weight: 600;
      }
      [aria-invalid='true'] {
        border-color: var(--error-fg);
      }
    `,
  ];
  @property({ attribute: false }) setup: RunSetup | null = null;
  /** A run is in progress (the form is locked). */
  @property({ type: Boolean }) running = false;
  /** The device is ready to run. */
  @property({ type: Boolean }) ready = false;
  /** The device (which WebLLM models can run here). */
  @property({ attribute: false }) environment: Environment | null = null;
  @state() private lengthsText = '';
  @state() private lengthsValid = true;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('setup') && this.setup && parseLengths(this.lengthsText)?.join(',') !== this.setup.sweep.promptLengths.join(',')) {
      this.lengthsText = this.setup.sweep.promptLengths.join(', ');
      this.lengthsValid = true;
    }
  }

  private change(next: Partial<RunSetup>): void {
    this.dispatchEvent(new CustomEvent<RunSetup>('setup-change', { detail: { ...this.setup!, ...next }, bubbles: true, composed: true }));
  }

  private sweep(key: 'gen' | 'reps', e: Event): void {
    const n = Number((e.target as HTMLInputElement).value);
    if (Number.isInteger(n) && n >= 1) this.change({ sweep: { ...this.setup!.sweep, [key]: n } });
  }

  private onLengths(e: Event): void {
    this.lengthsText = (e.target as HTMLInputElement).value;
    const lengths = parseLengths(this.lengthsText);
    this.lengthsValid = lengths !== null;
    if (lengths) this.change({ sweep: { ...this.setup!.sweep, promptLengths: lengths } });
  }

  override render() {
    const s = this.setup;
    if (!s) return html`<p class="muted">Waiting for the GPU…</p>`;
    const locked = this.running;
    const problem = this.lengthsValid ? setupProblem(s) : 'Prompt lengths must be whole numbers from 1 to 32768, separated by commas.';
    return html`<ts-model-picker .pick=${s.model} .environment=${this.environment} ?disabled=${locked || s.mode === 'roofs'}
        @pick-change=${(e: CustomEvent<ModelPick>) => this.change({ model: e.detail })}></ts-model-picker>
      <fieldset ?disabled=${locked}>
        <legend>What to measure</legend>
        ${(Object.keys(MODE_TEXT) as Mode[]).map(
          (m) => html`<label class="mode check">
            <input type="radio" name="mode" value=${m} .checked=${s.mode === m} @change=${() => this.change({ mode: m })} />
            <span><strong>${MODE_TEXT[m][0]}</strong> <span class="muted">— ${MODE_TEXT[m][1]}</span></span>
          </label>`,
        )}
      </fieldset>
      ${s.mode === 'latency'
        ? html`<fieldset ?disabled=${locked}>
            <legend>Latency sweep</legend>
            <div class="sweep">
              <label>Prompt lengths (tokens)
                <input id="lengths" inputmode="numeric" .value=${this.lengthsText} aria-invalid=${String(!this.lengthsValid)} aria-describedby="problem" @input=${this.onLengths} />
              </label>
              <label>Output tokens
                <input id="gen" type="number" min="1" max="4096" .value=${String(s.sweep.gen)} @change=${(e: Event) => this.sweep('gen', e)} />
              </label>
              <label>Repetitions per length
                <input id="reps" type="number" min="1" max="1000" .value=${String(s.sweep.reps)} @change=${(e: Event) => this.sweep('reps', e)} />
              </label>
              <label class="check">
                <input id="profile" type="checkbox" .checked=${s.sweep.profile} @change=${(e: Event) => this.change({ sweep: { ...s.sweep, profile: (e.target as HTMLInputElement).checked } })} />
                per-kernel profile (one extra run per length)
              </label>
            </div>
          </fieldset>`
        : ''}
      ${s.mode === 'serve'
        ? html`<ts-serve-setup .settings=${s.serve} ?disabled=${locked} @serve-change=${(e: CustomEvent<ServeSettings>) => this.change({ serve: e.detail })}></ts-serve-setup>`
        : ''}
      <div class="go">
        <button class="run" @click=${() => this.dispatchEvent(new CustomEvent('run', { bubbles: true, composed: true }))} ?disabled=${locked || !this.ready || problem !== null}>Run</button>
        <span id="problem" class="muted" role="status">${problem ?? (this.ready ? '' : 'Waiting for the GPU…')}</span>
      </div>`;
  }
}
