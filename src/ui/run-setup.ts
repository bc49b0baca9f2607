import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Environment } from '../measure/schema.ts';
import type { ServeSettings } from '../serve/run.ts';
import { humanDate, type ReportRoofs } from './headline.ts';
import { modelFloorSeconds, preflight, roofsSeconds } from './preflight.ts';
import { MAX_LIST_ENTRIES, MAX_PROMPT_TOKENS } from '../measure/validate.ts';
import { parseLengths, setupProblem, type Mode, type ModelPick, type RunSetup } from './setup.ts';
import { shared } from './styles.ts';
import './model-picker.ts';
import './serve-setup.ts';

const MODE_TEXT: Record<Mode, [string, string]> = {
  roofs: ['Roofs only', 'memory bandwidth and compute peaks of this device'],
  latency: ['Latency sweep', 'TTFT and TPOT at several prompt lengths, the depth curve, the roofline verdicts'],
  'llama-bench': ['llama-bench', 'pp and tg tokens/s (llama.cpp’s pp512 and tg128 by default), 5 repetitions, comparable with llama.cpp’s table'],
  serve: ['Serving', 'many requests at once through a batching scheduler: throughput, goodput against latency targets, capacity (vLLM bench serve)'],
};

/** "about 45 s", "about 3 min". */
function duration(seconds: number): string {
  return seconds < 90 ? `${Math.max(1, Math.round(seconds))} s` : `${Math.round(seconds / 60)} min`;
}

/**
 * The run form: the one big Run button with the run's expected duration, and behind a disclosure
 * the model, mode and sweep settings. Each setup is checked before it can start: its numbers
 * against the CLI's ranges (`setupProblem`), its fit to the model (`preflight`, which offers the
 * nearest setup that fits) and its work against the CLI's --yes bound ("Run it anyway"). The
 * setup itself is owned by the page (properties in, events out).
 *
 * @fires setup-change - detail: the new `RunSetup`.
 * @fires run - the visitor asked to run the current setup.
 * @fires measure-roofs-again - detail: whether the next run measures the roofs again instead of reusing the cached ones.
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
      details.settings > summary {
        cursor: pointer;
        color: var(--accent);
        margin: 10px 0 6px;
      }
      .fix {
        margin-left: 8px;
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
  /** This device's roofs from a report measured on this page, for the model phases' floor. */
  @property({ attribute: false }) roofs: ReportRoofs | null = null;
  /** When the roofs the page's cache would reuse were measured (roofs-store.ts); null when it holds none. */
  @property({ attribute: false }) reusableRoofs: string | null = null;
  @property({ type: Boolean }) measureRoofsAgain = false;
  /** Settings start open where there is room for them above the fold's end, folded on a phone. */
  @state() private settingsOpen = typeof matchMedia === 'function' && matchMedia('(min-width: 700px)').matches;
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

  /** "Takes about 45 s (the roofs) plus at least 2 s for the model": from this device's kind and roofs. */
  private expected(s: RunSetup): string {
    const cpuLike = this.environment?.cpu_adapter ?? false;
    const roofs = roofsSeconds(cpuLike, s.probeReps !== undefined);
    const floor = this.roofs ? modelFloorSeconds(s, this.roofs) : null;
    const what = cpuLike ? 'on this CPU adapter' : 'on this GPU';
    if (s.mode === 'roofs') return `Takes about ${duration(roofs)} ${what}.`;
    const then = floor === null ? 'the model phases' : `at least ${duration(floor)} for the model (its roofline floor; overhead adds to it)`;
    if (this.reusing(s)) return `Reuses this device's roofs measured ${humanDate(this.reusableRoofs!)} (no time for the roofs), then ${then}.`;
    return `Takes about ${duration(roofs)} for the roofs ${what}, then ${floor === null ? 'the model phases' : `at least ${duration(floor)} for the model (its roofline floor; overhead adds to it)`}.`;
  }

  /** Whether the next run takes the cached roofs instead of measuring them. */
  private reusing(s: RunSetup): boolean {
    return s.mode !== 'roofs' && this.reusableRoofs !== null && !this.measureRoofsAgain;
  }

  override render() {
    const s = this.setup;
    if (!s) return html`<p class="muted">${this.ready ? '' : 'Looking for a WebGPU device…'}</p>`;
    const locked = this.running;
    const check = preflight(s);
    const problem = !this.lengthsValid
      ? `Prompt lengths must be at most ${MAX_LIST_ENTRIES} whole numbers from 1 to ${MAX_PROMPT_TOKENS}, separated by commas.`
      : (setupProblem(s) ?? check?.problem ?? null);
    return html`<div class="go">
        <button
          class="run"
          @click=${() => this.dispatchEvent(new CustomEvent('run', { bubbles: true, composed: true }))}
          ?disabled=${locked || !this.ready || problem !== null}
        >
          Run
        </button>
        <span class="muted" id="expected">${this.running ? '' : this.expected(s)}</span>
        ${
          s.mode !== 'roofs' && this.reusableRoofs !== null
            ? html`<label class="check"
                ><input
                  type="checkbox"
                  id="measure-roofs-again"
                  ?disabled=${locked}
                  .checked=${this.measureRoofsAgain}
                  @change=${(e: Event) =>
                    this.dispatchEvent(
                      new CustomEvent<boolean>('measure-roofs-again', { detail: (e.target as HTMLInputElement).checked, bubbles: true, composed: true }),
                    )}
                />
                measure the roofs again</label
              >`
            : ''
        }
      </div>
      <p id="problem" class="muted" role="status">
        ${problem ?? (this.ready ? '' : 'Looking for a WebGPU device…')}${
          check?.fix && problem === check.problem
            ? html`<button
                class="small fix"
                id="fix"
                @click=${() => this.dispatchEvent(new CustomEvent<RunSetup>('setup-change', { detail: check.fix!.setup, bubbles: true, composed: true }))}
              >
                ${check.fix.label}
              </button>`
            : ''
        }
      </p>
      <details
        class="settings"
        ?open=${this.settingsOpen || !this.lengthsValid}
        @toggle=${(e: Event) => (this.settingsOpen = (e.target as HTMLDetailsElement).open)}
      >
        <summary>Settings: ${this.summary(s)}</summary>
        ${this.settings(s, locked)}
      </details>`;
  }

  private summary(s: RunSetup): string {
    const m = s.model;
    const model =
      s.mode === 'roofs'
        ? ''
        : `${m.kind === 'preset' || m.kind === 'known' || m.kind === 'webllm' ? m.id : m.kind === 'url' ? 'a GGUF link' : 'a local file'}${m.quant ? ` ${m.quant}` : ''}, `;
    const what =
      s.mode === 'latency'
        ? `latency sweep at prompts ${s.sweep.promptLengths.join(', ')}, ${s.sweep.gen} output tokens, ${s.sweep.reps} reps`
        : s.mode === 'llama-bench'
          ? `llama-bench pp${s.llamaBench.nPrompt} · tg${s.llamaBench.nGen}`
          : s.mode === 'serve'
            ? `serving ${s.serve.requests} requests`
            : 'roofs only';
    return `${model}${what}`;
  }

  private settings(s: RunSetup, locked: boolean) {
    return html`<ts-model-picker
        .pick=${s.model}
        .environment=${this.environment}
        ?disabled=${locked || s.mode === 'roofs'}
        @pick-change=${(e: CustomEvent<ModelPick>) => this.change({ model: e.detail })}
      ></ts-model-picker>
      <fieldset ?disabled=${locked}>
        <legend>What to measure</legend>
        ${(Object.keys(MODE_TEXT) as Mode[]).map(
          (m) =>
            html`<label class="mode check">
              <input type="radio" name="mode" value=${m} .checked=${s.mode === m} @change=${() => this.change({ mode: m })} />
              <span><strong>${MODE_TEXT[m][0]}</strong> <span class="muted">— ${MODE_TEXT[m][1]}</span></span>
            </label>`,
        )}
      </fieldset>
      ${
        s.mode === 'latency'
          ? html`<fieldset ?disabled=${locked}>
              <legend>Latency sweep</legend>
              <div class="sweep">
                <label
                  >Prompt lengths (tokens)
                  <input
                    id="lengths"
                    inputmode="numeric"
                    .value=${this.lengthsText}
                    aria-invalid=${String(!this.lengthsValid)}
                    aria-describedby="problem"
                    @input=${this.onLengths}
                  />
                </label>
                <label
                  >Output tokens
                  <input id="gen" type="number" min="1" max="4096" .value=${String(s.sweep.gen)} @change=${(e: Event) => this.sweep('gen', e)} />
                </label>
                <label
                  >Repetitions per length
                  <input id="reps" type="number" min="1" max="1000" .value=${String(s.sweep.reps)} @change=${(e: Event) => this.sweep('reps', e)} />
                </label>
                <label class="check">
                  <input
                    id="profile"
                    type="checkbox"
                    .checked=${s.sweep.profile}
                    @change=${(e: Event) => this.change({ sweep: { ...s.sweep, profile: (e.target as HTMLInputElement).checked } })}
                  />
                  per-kernel profile (one extra run per length)
                </label>
              </div>
            </fieldset>`
          : ''
      }
      ${
        s.mode === 'llama-bench'
          ? html`<fieldset ?disabled=${locked}>
              <legend>llama-bench</legend>
              <div class="sweep">
                <label
                  >Prompt tokens (pp)
                  <input
                    id="pp"
                    type="number"
                    min="1"
                    max="32768"
                    .value=${String(s.llamaBench.nPrompt)}
                    @change=${(e: Event) => this.llamaBench('nPrompt', e)}
                  />
                </label>
                <label
                  >Generated tokens (tg)
                  <input id="tg" type="number" min="1" max="4096" .value=${String(s.llamaBench.nGen)} @change=${(e: Event) => this.llamaBench('nGen', e)} />
                </label>
              </div>
            </fieldset>`
          : ''
      }
      ${
        s.mode === 'serve'
          ? html`<ts-serve-setup
              .settings=${s.serve}
              ?disabled=${locked}
              @serve-change=${(e: CustomEvent<ServeSettings>) => this.change({ serve: e.detail })}
            ></ts-serve-setup>`
          : ''
      }`;
  }

  private llamaBench(key: 'nPrompt' | 'nGen', e: Event): void {
    const n = Number((e.target as HTMLInputElement).value);
    if (Number.isInteger(n) && n >= 1) this.change({ llamaBench: { ...this.setup!.llamaBench, [key]: n } });
  }
}
