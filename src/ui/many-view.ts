import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { fetchResultList, parseResultsText, resultsOfLink } from '../share/result-list.ts';
import { MAX_IMPORT_CHARS } from '../share/export.ts';
import { TokenscopeError } from '../errors.ts';
import { cohorts, PERCENTILE_SPREAD_MIN_N, type Group, type LabelledResult } from './cohorts.ts';
import { num, pct } from './format.ts';
import { toShown, type ShownError } from './session.ts';
import { shared } from './styles.ts';
import './cohort-chart.ts';

/** Longest paste of links read (characters): a few hundred links at the link budget. */
const MAX_PASTE_CHARS = 4 * 1024 * 1024;

const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/**
 * Many results at once: result files (several at a time, or dropped here), pasted links (one per
 * line) and a URL to a list (`npm run bench -- --merge`), grouped by device, model, format and
 * runtime (cohorts.ts) in a table and a chart, with the page's own latest run ranked among them.
 * A source that cannot be read leaves a message naming it; the others are kept.
 *
 * @fires close - the visitor closed the view.
 */
@customElement('ts-many-view')
export class ManyView extends LitElement {
  static override styles = [
    shared,
    css`
      .sources {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(260px, 1fr));
        gap: 12px 16px;
        align-items: start;
      }
      .sources form,
      .sources .files {
        display: flex;
        flex-direction: column;
        gap: 6px;
      }
      textarea {
        width: 100%;
        min-height: 4.5em;
        font-family: var(--mono);
        font-size: 0.8rem;
        box-sizing: border-box;
      }
      .dropzone {
        border: 2px dashed var(--border);
        border-radius: 8px;
        padding: 10px;
      }
      .dropzone.over {
        border-color: var(--accent);
      }
      tr.mine {
        background: color-mix(in srgb, var(--accent) 14%, transparent);
      }
      tr.mine th {
        border-left: 4px solid var(--accent);
      }
      .group-sub {
        display: block;
        font-weight: normal;
      }
      .yours {
        border-left: 4px solid var(--accent);
        padding: 6px 12px;
        margin: 12px 0;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        margin-top: 10px;
      }
      #many-table th[scope='row'] {
        min-width: 12em;
      }
      @media (max-width: 520px) {
        #many-table th[scope='row'] {
          min-width: 8.5em;
        }
      }
      #many-table td {
        white-space: nowrap;
      }
      code {
        white-space: nowrap;
      }
      h3 {
        font-size: 1rem;
        margin: 18px 0 8px;
      }
      ul.errors {
        margin: 4px 0 0;
        padding-left: 1.2em;
      }
    `,
  ];
  /** The page's own reports (runs made here, links and files opened); the newest run made here is "your run". */
  @property({ attribute: false }) own: LabelledResult[] = [];
  /** A list to fetch when the view opens (`#results=URL`). */
  @property() listUrl: string | null = null;
  @state() private loaded: LabelledResult[] = [];
  @state() private problems: ShownError[] = [];
  @state() private busy: string | null = null;
  @state() private over = false;
  @state() private links = '';
  @state() private url = '';
  private fetchedUrl: string | null = null;

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('listUrl') && this.listUrl && this.listUrl !== this.fetchedUrl) {
      this.url = this.listUrl;
      void this.loadUrl(this.listUrl);
    }
  }

  /** Run one loading step; its failure is kept (naming `what`) and the view stays usable. */
  private async load(what: string, step: () => Promise<LabelledResult[]>): Promise<void> {
    this.busy = `Reading ${what}…`;
    try {
      const items = await step();
      this.loaded = [...this.loaded, ...items];
    } catch (e) {
      const shown = toShown(e);
      this.problems = [...this.problems, { ...shown, message: `${what}: ${shown.message}` }];
    } finally {
      this.busy = null;
    }
  }

  private async loadUrl(url: string): Promise<void> {
    this.fetchedUrl = url;
    const name = url.slice(0, 200);
    await this.load(`the list at ${name}`, async () => (await fetchResultList(url)).map((result, i) => ({ label: `${name} #${i + 1}`, result })));
  }

  private async loadFiles(files: readonly File[]): Promise<void> {
    for (const file of files) {
      const name = file.name.slice(0, 80);
      await this.load(`the file “${name}”`, async () => {
        if (file.size > MAX_IMPORT_CHARS * 4)
          throw new TokenscopeError('bad-input', `It is ${file.size} bytes; the view reads at most ${MAX_IMPORT_CHARS} characters.`, 'Choose smaller files.');
        const results = await parseResultsText(await file.text());
        return results.map((result, i) => ({ label: results.length > 1 ? `${name} #${i + 1}` : name, result }));
      });
    }
  }

  private async loadLinks(text: string): Promise<void> {
    if (text.length > MAX_PASTE_CHARS) {
      this.problems = [
        ...this.problems,
        {
          message: `The pasted text has ${text.length} characters; at most ${MAX_PASTE_CHARS}.`,
          hint: 'Paste fewer links, or merge the results into a list with the CLI.',
          code: 'bad-input',
        },
      ];
      return;
    }
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean);
    for (const [i, line] of lines.entries()) {
      await this.load(`link ${i + 1}`, async () => (await resultsOfLink(line)).map((result, k) => ({ label: `link ${i + 1}${k ? ' B' : ''}`, result })));
    }
  }

  private readonly onDragOver = (e: DragEvent) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.stopPropagation();
    this.over = true;
  };

  private readonly onDrop = (e: DragEvent) => {
    this.over = false;
    if (!e.dataTransfer?.files.length) return;
    // Kept here: the page's own drop handler would open the files as single reports.
    e.preventDefault();
    e.stopPropagation();
    void this.loadFiles([...e.dataTransfer.files]);
  };

  private sources() {
    return html`<div class="sources">
      <div class="files dropzone ${this.over ? 'over' : ''}" @dragover=${this.onDragOver} @dragleave=${() => (this.over = false)} @drop=${this.onDrop}>
        <label
          >Result JSON files (choose several, or drop them here)
          <input
            id="many-files"
            type="file"
            accept=".json,application/json"
            multiple
            @change=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              void this.loadFiles([...(input.files ?? [])]).then(() => (input.value = ''));
            }}
          />
        </label>
        <span class="muted">A result saved with <code>--json</code> or exported here, or a list made with <code>--merge</code>.</span>
      </div>
      <form
        @submit=${(e: Event) => {
          e.preventDefault();
          const text = this.links;
          this.links = '';
          void this.loadLinks(text);
        }}
      >
        <label
          >Links, one per line
          <textarea
            id="many-links"
            spellcheck="false"
            .value=${this.links}
            @input=${(e: Event) => (this.links = (e.target as HTMLTextAreaElement).value)}
          ></textarea>
        </label>
        <button class="secondary" type="submit" ?disabled=${!this.links.trim()}>Add links</button>
      </form>
      <form
        @submit=${(e: Event) => {
          e.preventDefault();
          if (this.url.trim()) void this.loadUrl(this.url.trim());
        }}
      >
        <label
          >URL of a result list (JSON)
          <input
            id="many-url"
            type="url"
            spellcheck="false"
            placeholder="https://…/list.json"
            .value=${this.url}
            @input=${(e: Event) => (this.url = (e.target as HTMLInputElement).value)}
          />
        </label>
        <button class="secondary" type="submit" ?disabled=${!this.url.trim()}>Load list</button>
      </form>
    </div>`;
  }

  private spreadCell(g: Group) {
    const s = g.decode_spread;
    if (!s) return html`<td class="num">—</td>`;
    return html`<td class="num spread" data-kind=${s.kind}>${num(s.lo)}–${num(s.hi)} <span class="muted">${s.kind}</span></td>`;
  }

  /** The table; the model is left out of each row when every group ran the same one (the summary names it). */
  private table(groups: Group[], prompt: number | null, mineGroup: Group | undefined, oneModel: boolean) {
    return html`<p class="scroll-hint" aria-hidden="true">Scroll the table sideways for more columns →</p>
      <div class="scroll" tabindex="0" role="region" aria-label="Results by group (scrolls sideways)">
        <table id="many-table">
          <thead>
            <tr>
              <th scope="col">Device · ${oneModel ? '' : 'model · '}format · runtime</th>
              <th scope="col" class="num">n</th>
              <th scope="col" class="num">Decode tok/s (median)</th>
              <th scope="col" class="num">Spread (decode tok/s)</th>
              <th scope="col" class="num">TPOT p50 (ms)</th>
              <th scope="col" class="num">TTFT at ${prompt ?? '—'} tokens (ms)</th>
              <th scope="col" class="num">% of read roof</th>
            </tr>
          </thead>
          <tbody>
            ${groups.map(
              (g) =>
                html`<tr class=${g === mineGroup ? 'mine' : ''} data-device=${g.device} data-model=${g.model} data-format=${g.format} data-runtime=${g.runtime}>
                  <th scope="row">
                    ${g.device}${g === mineGroup ? html` <strong>(your run)</strong>` : ''}
                    <span class="group-sub muted">${oneModel ? '' : `${g.model} `}${g.format} · ${g.runtime}</span>
                  </th>
                  <td class="num n">${g.n}</td>
                  <td class="num">${num(g.decode_tokens_per_s)}</td>
                  ${this.spreadCell(g)}
                  <td class="num">${num(g.tpot_p50_ms)}</td>
                  <td class="num">${num(g.ttft_ms)}</td>
                  <td class="num">${pct(g.read_roof_share)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`;
  }

  override render() {
    const items = [...this.own, ...this.loaded];
    const view = cohorts(items);
    const { groups, mine } = view;
    const devices = new Set(groups.map((g) => g.device)).size;
    const oneModel = new Set(groups.map((g) => g.model)).size === 1;
    const sources = html`<h3>${groups.length ? 'Add results' : 'Open results'}</h3>
      ${this.sources()}`;
    return html`${groups.length ? '' : sources} ${this.busy ? html`<p class="muted" role="status">${this.busy}</p>` : ''}
      ${
        this.problems.length
          ? html`<div class="banner error" role="alert" id="many-problems">
              <strong
                >${this.problems.length === 1 ? 'One source could not be read' : `${this.problems.length} sources could not be read`}; the others are
                shown.</strong
              >
              <ul class="errors">
                ${this.problems.map((p) => html`<li>${p.message}${p.hint ? html` <span class="muted">${p.hint}</span>` : ''}</li>`)}
              </ul>
              <button class="small secondary" @click=${() => (this.problems = [])}>Dismiss</button>
            </div>`
          : ''
      }
      ${
        groups.length === 0
          ? html`<p class="muted" id="many-empty">
              No results with a latency sweep yet${items.length ? ` (${items.length} opened measured no tokens: roofs only)` : ''}. Open result files, paste
              links or load a list above; runs made on this page join them.
            </p>`
          : html`<p id="many-summary">
                <strong>${view.runs.length} runs</strong> from ${items.length} results in <strong>${groups.length} groups</strong> on ${devices}
                ${devices === 1 ? 'device' : 'devices'}${oneModel ? html`, all of <strong>${groups[0].model}</strong>` : ''}${view.without_rows ? html` <span class="muted">(${view.without_rows} roofs-only results not grouped)</span>` : ''}.
              </p>
              ${
                mine
                  ? html`<p class="yours" id="many-yours">
                      <strong>${mine.run.label}</strong>: ${num(mine.run.decode_tokens_per_s)} decode tok/s — ${ordinal(mine.rank)} of ${mine.of} runs,
                      ${ordinal(mine.groupRank)} of ${mine.groupOf} in its group (${mine.group.device}, ${mine.group.model} ${mine.group.format}).
                    </p>`
                  : html`<p class="muted" id="many-yours">Run a latency sweep on this page and your run is ranked here among these.</p>`
              }
              ${this.table(groups, view.prompt_tokens, mine?.group, oneModel)}
              <p class="muted">
                Fastest decode first. Per run: decode tok/s, TPOT p50 and % of the read roof at its shortest prompt; TTFT at ${view.prompt_tokens} prompt
                tokens, the length most runs measured (— where a run did not). Per group: medians across its runs; the spread is p10–p90 where a group has
                ${PERCENTILE_SPREAD_MIN_N} or more runs, min–max below that (said in each row).
              </p>
              <ts-cohort-chart .cohorts=${view}></ts-cohort-chart>
              ${sources}`
      }
      <div class="row">
        ${this.loaded.length ? html`<button class="secondary" @click=${() => (this.loaded = [])}>Clear opened results (${this.loaded.length})</button>` : ''}
        <button class="secondary" @click=${() => this.dispatchEvent(new CustomEvent('close', { bubbles: true, composed: true }))}>Close this view</button>
      </div>`;
  }
}
