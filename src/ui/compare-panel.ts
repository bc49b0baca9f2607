import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ReportEntry } from './reports.ts';
import { shared } from './styles.ts';

/**
 * Choose two reports to compare — runs made here, shared links, imported files — and add more
 * by pasting a link.
 *
 * @fires compare - detail: `{ a, b }`, the two report ids.
 * @fires open-link - detail: the pasted text (a tokenscope link).
 */
@customElement('ts-compare-panel')
export class ComparePanel extends LitElement {
  static override styles = [
    shared,
    css`
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(220px, 1fr));
        gap: 10px 14px;
        align-items: end;
      }
      .paste {
        display: flex;
        gap: 8px;
        align-items: end;
        margin-top: 12px;
      }
      .paste label {
        flex: 1;
      }
    `,
  ];
  @property({ attribute: false }) entries: ReportEntry[] = [];
  @state() private a: number | null = null;
  @state() private b: number | null = null;
  @state() private pasted = '';

  private usable(): ReportEntry[] {
    return this.entries.filter((e) => e.result !== null && e.state !== 'running');
  }

  override render() {
    const usable = this.usable();
    const ids = usable.map((e) => e.id);
    // Default to the two most recent reports.
    const a = this.a !== null && ids.includes(this.a) ? this.a : (ids[ids.length - 2] ?? null);
    const b = this.b !== null && ids.includes(this.b) ? this.b : (ids[ids.length - 1] ?? null);
    const select = (which: 'a' | 'b', value: number | null) =>
      html`<label
        >Report ${which.toUpperCase()}
        <select id=${`compare-${which}`} @change=${(e: Event) => (this[which] = Number((e.target as HTMLSelectElement).value))}>
          ${usable.map((e) => html`<option value=${e.id} ?selected=${e.id === value}>${e.label}</option>`)}
        </select>
      </label>`;
    return html`${
        usable.length >= 2
          ? html`<div class="grid">
              ${select('a', a)} ${select('b', b)}
              <div>
                <button
                  ?disabled=${a === null || b === null || a === b}
                  @click=${() => this.dispatchEvent(new CustomEvent('compare', { detail: { a, b }, bubbles: true, composed: true }))}
                >
                  Compare A and B
                </button>
              </div>
            </div>`
          : html`<p class="muted">Comparing needs two reports: run here, open a shared link, import a JSON file — or paste a link below.</p>`
      }
      <form
        class="paste"
        @submit=${(e: Event) => {
          e.preventDefault();
          if (this.pasted.trim()) this.dispatchEvent(new CustomEvent<string>('open-link', { detail: this.pasted, bubbles: true, composed: true }));
          this.pasted = '';
        }}
      >
        <label
          >Paste a tokenscope link
          <input
            id="paste-link"
            type="text"
            autocomplete="off"
            spellcheck="false"
            placeholder="https://…#r=…"
            .value=${this.pasted}
            @input=${(e: Event) => (this.pasted = (e.target as HTMLInputElement).value)}
          />
        </label>
        <button class="secondary" type="submit">Add</button>
      </form>`;
  }
}
