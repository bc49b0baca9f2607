import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { BenchResult } from '../measure/schema.ts';
import { rowsToCsv, toJson } from '../share/export.ts';
import { encodeReport, shareable } from '../share/permalink.ts';
import { downloadText, fileStamp } from './download.ts';
import { toShown, type ShownError } from './session.ts';
import { shared } from './styles.ts';

/**
 * Where a fragment becomes a full link: this page's address without its query string or old
 * fragment, so the sender's URL parameters never reconfigure the recipient's form.
 */
export function linkFor(fragment: string): string {
  return `${location.origin}${location.pathname}${fragment}`;
}

/**
 * Share, export and import for the report on show: a `#r=` link (trimmed to fit, and saying
 * so), the full JSON, the latency rows as CSV, and JSON import by file chooser.
 *
 * @fires link-made - detail: the `#r=…` fragment just made (the page puts it in the address bar).
 * @fires import-files - detail: the `File[]` the visitor chose.
 */
@customElement('ts-share-bar')
export class ShareBar extends LitElement {
  static override styles = [
    shared,
    css`
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        align-items: center;
      }
      input[readonly] {
        width: 100%;
        font-family: var(--mono);
        font-size: 0.8rem;
      }
      .out {
        margin-top: 8px;
      }
    `,
  ];
  @property({ attribute: false }) result: BenchResult | null = null;
  @state() private link: { url: string; trimmedNotes: string[]; copied: boolean } | null = null;
  @state() private error: ShownError | null = null;

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('result')) {
      this.link = null;
      this.error = null;
    }
  }

  private async share(): Promise<void> {
    const result = this.result;
    if (!result) return;
    try {
      const trimmed = await shareable(result);
      const fragment = await encodeReport(trimmed);
      const before = new Set(result.notes ?? []);
      const url = linkFor(fragment);
      let copied = false;
      try {
        await navigator.clipboard.writeText(url);
        copied = true;
      } catch {
        // No clipboard permission (or not a secure context): the link is shown to copy by hand.
      }
      this.link = { url, trimmedNotes: (trimmed.notes ?? []).filter((n) => !before.has(n)), copied };
      this.error = null;
      this.dispatchEvent(new CustomEvent<string>('link-made', { detail: fragment, bubbles: true, composed: true }));
    } catch (e) {
      this.error = toShown(e);
    }
  }

  private stem(): string {
    return `tokenscope-${fileStamp(this.result?.created_at ?? '')}`;
  }

  override render() {
    const r = this.result;
    const hasRows = (r?.latency?.rows?.length ?? 0) > 0;
    return html`<div class="row">
        <button @click=${this.share} ?disabled=${!r}>Share link</button>
        <button class="secondary" ?disabled=${!r} @click=${() => downloadText(toJson(r!), `${this.stem()}.json`, 'application/json')}>Export JSON</button>
        <button class="secondary" ?disabled=${!hasRows} @click=${() => downloadText(rowsToCsv(r!), `${this.stem()}-rows.csv`, 'text/csv')}>
          Export CSV of rows
        </button>
        <label class="button secondary">
          Import JSON…
          <input
            class="sr-only"
            type="file"
            accept=".json,application/json"
            multiple
            @change=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              const files = [...(input.files ?? [])];
              input.value = '';
              if (files.length) this.dispatchEvent(new CustomEvent<File[]>('import-files', { detail: files, bubbles: true, composed: true }));
            }}
          />
        </label>
      </div>
      ${
        this.link
          ? html`<div class="out" role="status">
              <label
                >${this.link.copied ? 'Link copied to the clipboard' : 'Copy this link'} (${this.link.url.length} characters)
                <input readonly .value=${this.link.url} @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
              </label>
              ${
                this.link.trimmedNotes.length
                  ? html`<p class="muted">To fit in a link: ${this.link.trimmedNotes.join(' ')}</p>`
                  : html`<p class="muted">The link holds the whole report; opening it shows these numbers and runs nothing.</p>`
              }
            </div>`
          : ''
      }
      ${this.error ? html`<div class="banner error" role="alert"><strong>${this.error.message}</strong> ${this.error.hint}</div>` : ''}`;
  }
}
