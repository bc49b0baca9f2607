import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { MLPERF_SLOS, type MlperfPreset, type Slo } from '../serve/metrics.ts';
import type { ServeSettings } from '../serve/run.ts';
import type { LengthDistribution } from '../serve/workload.ts';
import { MAX_BATCH, parseList } from './setup.ts';
import { shared } from './styles.ts';

type NumberKey = 'requests' | 'max_batch' | 'rate' | 'dollars_per_hour' | 'watts';
type OptionalKey = 'shared_prefix' | 'conversations' | 'turns' | 'max_queue' | 'timeout_ms' | 'degrade_over' | 'degrade_to' | 'sla_percent';

const tokensOf = (d: LengthDistribution) => (d.kind === 'fixed' ? d.tokens : d.kind === 'uniform' ? d.max : d.median);

/** The MLPerf preset whose limits `slo` is exactly, if any. */
function presetOf(slo: Slo): MlperfPreset | '' {
  const hit = (Object.entries(MLPERF_SLOS) as [MlperfPreset, { ttft: number; tpot: number }][]).find(
    ([, l]) => l.ttft === slo.ttft && l.tpot === slo.tpot && slo.e2el === undefined,
  );
  return hit?.[0] ?? '';
}

/**
 * The serving workload form: how requests arrive, how many, how long, how the scheduler batches
 * them, the latency targets (SLOs) that decide which requests count as good, the sweeps, and the
 * price and power the visitor pays (a browser can read neither).
 *
 * @fires serve-change - detail: the new `ServeSettings`.
 */
@customElement('ts-serve-setup')
export class ServeSetupForm extends LitElement {
  static override styles = [
    shared,
    css`
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(160px, 1fr));
        gap: 10px 14px;
        align-items: end;
      }
      h3 {
        font-size: 0.95rem;
        margin: 14px 0 6px;
      }
      .check {
        flex-direction: row;
        align-items: center;
        gap: 8px;
        font-weight: normal;
      }
      [aria-invalid='true'] {
        border-color: var(--error-fg);
      }
      p.note {
        margin: 4px 0 0;
        font-size: 0.85rem;
      }
    `,
  ];
  @property({ attribute: false }) settings: ServeSettings | null = null;
  @property({ type: Boolean }) disabled = false;
  @state() private sweepText = '';
  @state() private sweepValid = true;

  protected override willUpdate(changed: PropertyValues<this>): void {
    const sweep = this.settings?.sweep_batch ?? [];
    if (changed.has('settings') && (parseList(this.sweepText, MAX_BATCH) ?? []).join(',') !== sweep.join(',')) {
      this.sweepText = sweep.join(', ');
      this.sweepValid = true;
    }
  }

  private change(next: Partial<ServeSettings>): void {
    this.dispatchEvent(new CustomEvent<ServeSettings>('serve-change', { detail: { ...this.settings!, ...next }, bubbles: true, composed: true }));
  }

  /** A positive number from an input; integers where `integer`; undefined when empty (optional fields). */
  private number(e: Event, integer: boolean): number | undefined | null {
    const raw = (e.target as HTMLInputElement).value.trim();
    if (raw === '') return undefined;
    const n = Number(raw);
    return n > 0 && Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : null;
  }

  private setNumber(key: NumberKey, e: Event, integer: boolean, optional = false): void {
    const n = this.number(e, integer);
    if (n === null || (n === undefined && !optional)) return;
    this.change({ [key]: key === 'max_batch' ? Math.min(n!, MAX_BATCH) : n });
  }

  /** An optional setting: empty leaves it out; a value outside validate.ts's range is kept for the run's check to name. */
  private setOptional(key: OptionalKey, e: Event): void {
    const raw = (e.target as HTMLInputElement).value.trim();
    const n = Number(raw);
    if (raw !== '' && !Number.isFinite(n)) return;
    const next: Partial<ServeSettings> = { [key]: raw === '' ? undefined : n };
    // A conversation has turns (2 unless given); without conversations there are none.
    if (key === 'conversations') next.turns = raw === '' ? undefined : (this.settings!.turns ?? 2);
    this.change(next);
  }

  private optional(key: OptionalKey, id: string, label: string, placeholder: string, min: number) {
    const v = this.settings![key];
    return html`<label
      >${label}
      <input
        id=${id}
        type="number"
        min=${min}
        step="any"
        placeholder=${placeholder}
        .value=${v === undefined ? '' : String(v)}
        ?disabled=${key === 'turns' && this.settings!.conversations === undefined}
        @change=${(e: Event) => this.setOptional(key, e)}
      />
    </label>`;
  }

  private setLength(key: 'prompt' | 'output', e: Event): void {
    const n = this.number(e, true);
    if (n) this.change({ [key]: { kind: 'fixed', tokens: n } });
  }

  private setSlo(key: keyof Slo, e: Event): void {
    const raw = (e.target as HTMLInputElement).value.trim();
    const n = Number(raw);
    if (raw !== '' && !(n >= 0 && Number.isFinite(n))) return;
    const slo = { ...this.settings!.slo };
    if (raw === '') delete slo[key];
    else slo[key] = n;
    this.change({ slo });
  }

  private onPreset(e: Event): void {
    const v = (e.target as HTMLSelectElement).value as MlperfPreset | '';
    this.change({ slo: v ? { ...MLPERF_SLOS[v] } : {} });
  }

  private onSweep(e: Event): void {
    this.sweepText = (e.target as HTMLInputElement).value;
    const list = this.sweepText.trim() === '' ? [] : parseList(this.sweepText, MAX_BATCH);
    this.sweepValid = list !== null;
    if (list) this.change({ sweep_batch: list.length ? list : undefined });
  }

  override render() {
    const s = this.settings;
    if (!s) return html``;
    const atOnce = s.rate === Infinity;
    const slo = (k: keyof Slo) => (s.slo[k] === undefined ? '' : String(s.slo[k]));
    return html`<fieldset ?disabled=${this.disabled}>
      <legend>Serving workload</legend>
      <div class="grid">
        <label
          >Requests
          <input id="requests" type="number" min="1" max="10000" .value=${String(s.requests)} @change=${(e: Event) => this.setNumber('requests', e, true)} />
        </label>
        <label class="check">
          <input
            id="at-once"
            type="checkbox"
            .checked=${atOnce}
            @change=${(e: Event) => this.change({ rate: (e.target as HTMLInputElement).checked ? Infinity : 4 })}
          />
          all at once (no arrival gaps)
        </label>
        <label
          >Arrival rate (requests/s, Poisson)
          <input
            id="rate"
            type="number"
            min="0.01"
            step="any"
            .value=${atOnce ? '' : String(s.rate)}
            ?disabled=${atOnce}
            placeholder=${atOnce ? 'all at once' : ''}
            @change=${(e: Event) => this.setNumber('rate', e, false)}
          />
        </label>
        <label
          >Max batch (sequences at once)
          <input
            id="max-batch"
            type="number"
            min="1"
            max=${MAX_BATCH}
            .value=${String(s.max_batch)}
            @change=${(e: Event) => this.setNumber('max_batch', e, true)}
          />
        </label>
        <label
          >Prompt tokens
          <input id="prompt-len" type="number" min="1" .value=${String(tokensOf(s.prompt))} @change=${(e: Event) => this.setLength('prompt', e)} />
        </label>
        <label
          >Output tokens
          <input id="output-len" type="number" min="1" .value=${String(tokensOf(s.output))} @change=${(e: Event) => this.setLength('output', e)} />
        </label>
        <label class="check">
          <input
            id="chunked"
            type="checkbox"
            .checked=${s.chunk !== null}
            @change=${(e: Event) => this.change({ chunk: (e.target as HTMLInputElement).checked ? 32 : null })}
          />
          chunked prefill
        </label>
        <label
          >Chunk size (prompt tokens per step)
          <input
            id="chunk"
            type="number"
            min="1"
            .value=${s.chunk === null ? '' : String(s.chunk)}
            ?disabled=${s.chunk === null}
            @change=${(e: Event) => {
              const n = this.number(e, true);
              if (n) this.change({ chunk: n });
            }}
          />
        </label>
      </div>
      <h3>Prefix caching and chat workloads</h3>
      <div class="grid">
        <label class="check">
          <input
            id="prefix-cache"
            type="checkbox"
            .checked=${s.prefix_cache !== false}
            @change=${(e: Event) => this.change({ prefix_cache: (e.target as HTMLInputElement).checked })}
          />
          prefix caching (blocks of 16 tokens, copy-on-hit)
        </label>
        ${this.optional('shared_prefix', 'shared-prefix', 'Shared system prompt (tokens)', 'none', 1)}
        ${this.optional('conversations', 'conversations', 'Conversations (multi-turn chats)', 'none', 1)}
        ${this.optional('turns', 'turns', 'Turns per conversation', '2', 1)}
      </div>
      ${
        s.conversations !== undefined
          ? html`<p class="note muted">
              ${s.conversations} conversations × ${s.turns ?? 2} turns = ${s.conversations * (s.turns ?? 2)} requests (the request count above is not used);
              each turn's prompt is the previous prompt, its answer and a new message.
            </p>`
          : ''
      }
      <h3>Admission and availability</h3>
      <div class="grid">
        ${this.optional('max_queue', 'max-queue', 'Max queue (requests beyond the free slots)', 'unbounded', 0)}
        ${this.optional('timeout_ms', 'timeout-ms', 'Timeout after arrival (ms)', 'none', 0)}
        ${this.optional('degrade_over', 'degrade-over', 'Degrade when more than N wait', 'never', 0)}
        ${this.optional('degrade_to', 'degrade-to', 'Degraded output (tokens)', 'half', 1)}
        ${this.optional('sla_percent', 'sla', 'Availability SLA (%)', 'e.g. 99.9', 0)}
      </div>
      <h3>Latency targets (SLOs) — a request is “good” only if it meets every one given</h3>
      <div class="grid">
        <label
          >Preset
          <select id="slo-preset" @change=${this.onPreset}>
            <option value="" ?selected=${presetOf(s.slo) === ''}>${Object.keys(s.slo).length ? 'custom' : 'none'}</option>
            ${Object.entries(MLPERF_SLOS).map(([name, l]) => html`<option value=${name} ?selected=${presetOf(s.slo) === name}>MLPerf ${name} (p99 TTFT ${l.ttft} ms, TPOT ${l.tpot} ms)</option>`)}
          </select>
        </label>
        <label
          >TTFT ≤ (ms)
          <input id="slo-ttft" type="number" min="0" step="any" placeholder="none" .value=${slo('ttft')} @change=${(e: Event) => this.setSlo('ttft', e)} />
        </label>
        <label
          >TPOT ≤ (ms)
          <input id="slo-tpot" type="number" min="0" step="any" placeholder="none" .value=${slo('tpot')} @change=${(e: Event) => this.setSlo('tpot', e)} />
        </label>
        <label
          >E2E latency ≤ (ms)
          <input id="slo-e2el" type="number" min="0" step="any" placeholder="none" .value=${slo('e2el')} @change=${(e: Event) => this.setSlo('e2el', e)} />
        </label>
      </div>
      <h3>Sweeps and cost</h3>
      <div class="grid">
        <label
          >Batch sizes to sweep (e.g. 1, 2, 4)
          <input
            id="sweep-batch"
            inputmode="numeric"
            placeholder="none"
            .value=${this.sweepText}
            aria-invalid=${String(!this.sweepValid)}
            @input=${this.onSweep}
          />
        </label>
        <label class="check">
          <input
            id="sweep-rate"
            type="checkbox"
            .checked=${s.sweep_rate ?? false}
            @change=${(e: Event) => this.change({ sweep_rate: (e.target as HTMLInputElement).checked })}
          />
          find the capacity (sweep the arrival rate; needs an SLO)
        </label>
        <label
          >Price ($ per hour, optional)
          <input
            id="dollars"
            type="number"
            min="0"
            step="any"
            placeholder="e.g. 2.50"
            .value=${s.dollars_per_hour === undefined ? '' : String(s.dollars_per_hour)}
            @change=${(e: Event) => this.setNumber('dollars_per_hour', e, false, true)}
          />
        </label>
        <label
          >Power (watts, optional)
          <input
            id="watts"
            type="number"
            min="0"
            step="any"
            placeholder="e.g. 300"
            .value=${s.watts === undefined ? '' : String(s.watts)}
            @change=${(e: Event) => this.setNumber('watts', e, false, true)}
          />
        </label>
      </div>
      <p class="note muted">A browser can read neither prices nor power: what you type here only feeds the cost per token and joules per token.</p>
    </fieldset>`;
  }
}
