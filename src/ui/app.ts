import { LitElement, html, css } from 'lit';
import { customElement, query, state } from 'lit/decorators.js';
import type { BenchJob } from '../jobs/job-spec.ts';
import type { BenchResult } from '../measure/schema.ts';
import type { MatvecBenchOptions } from '../measure/matvec-bench.ts';
import { isTokenscopeError } from '../errors.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { blobSource } from '../model/gguf/source.ts';
import { humanDate, reportTitle, roofsOf, type ReportRoofs } from './headline.ts';
import { phasePlan, stepOf } from './preflight.ts';
import { Reports, type ReportEntry } from './reports.ts';
import { GpuSession } from './session.ts';
import { defaultSetup, jobOf, parsePageParams, type RunSetup } from './setup.ts';
import { RoofsOffer, type RoofsCacheMode } from './roofs-offer.ts';
import { shared } from './styles.ts';
import type { LabelledResult } from './cohorts.ts';
import './compare-panel.ts';
import './device-panel.ts';
import './progress-bar.ts';
import './report-view.ts';
import './run-setup.ts';
import './share-bar.ts';
import './what-if-panel.ts';

/** The automation entry point (`window.tokenscope`): the CLI's browser runtime and the tests call it. */
export interface AutomationApi {
  /**
   * Run a job as the Run button does (the report appears on the page); rejects when the run fails.
   * `roofsCache` uses the page's per-device roofs cache as the Run button does ('use'), or measures
   * and stores them ('fresh'); without it the cache is left alone.
   */
  runJob(job: BenchJob, onProgress?: (step: string, fraction: number) => void, options?: { roofsCache?: RoofsCacheMode }): Promise<unknown>;
  capabilities(): Promise<Capabilities>;
  /** Cancel the run in progress (as the Cancel button does). */
  cancel(): void;
  /** Destroy the GPU device, as a driver reset would (tests of device loss). */
  loseDevice(): void;
  /** Runs started since the page loaded. */
  runsStarted(): number;
  /** The linear-layer micro-benchmark (`npm run bench:matvec -- --runtime browser`); its lines go to `log`. */
  matvecBench(opts: MatvecBenchOptions, log: (line: string) => void): Promise<void>;
}

const MODE_NAMES = { roofs: 'roofs only', latency: 'latency sweep', 'llama-bench': 'llama-bench', serve: 'serving' } as const;

function describeSetup(s: RunSetup): string {
  if (s.mode === 'roofs') return 'roofs only';
  const m = s.model;
  const model =
    m.kind === 'preset' || m.kind === 'known' || m.kind === 'webllm' ? m.id : m.kind === 'url' ? m.url.split('/').pop() : (m.file?.name ?? 'a local file');
  return `${model}${m.quant ? ` ${m.quant}` : ''}, ${MODE_NAMES[s.mode]}`;
}

/**
 * The tokenscope page. Runs nothing until the visitor clicks Run (or the CLI calls the automation
 * API); a `#r=` or `#c=` link shows a report or a comparison without running anything. Every string
 * from the device, a link or a file is rendered as text.
 */
@customElement('ts-app')
export class App extends LitElement {
  static override styles = [
    shared,
    css`
      main {
        max-width: 1100px;
        margin: 0 auto;
        padding: 20px 16px 48px;
      }
      header h1 {
        font-size: 1.6rem;
        margin: 0;
      }
      header p {
        margin: 4px 0 18px;
      }
      header nav {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 16px;
        margin: 6px 0 0;
        font-size: 0.95rem;
      }
      .actions {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        margin: 12px 0 0;
      }
      /* Progress and Cancel stay on screen while the results below scroll into view. */
      .progress {
        position: sticky;
        top: 0;
        z-index: 5;
        margin-top: 12px;
      }
      .report-head {
        display: flex;
        flex-wrap: wrap;
        gap: 8px 16px;
        align-items: end;
        margin-bottom: 12px;
      }
      .report-head label {
        flex: 1 1 260px;
      }
      .drop {
        outline: 3px dashed var(--accent);
        outline-offset: 6px;
      }
      footer {
        font-size: 0.85rem;
      }
      .why {
        margin: 0 0 14px;
        max-width: 75ch;
      }
      .shared-banner {
        border-left: 4px solid var(--accent);
        padding: 8px 12px;
        margin: 0 0 12px;
        background: var(--card);
      }
      .shared-banner strong {
        font-size: 1.1rem;
      }
      details.run-here > summary {
        cursor: pointer;
        font-size: 1.2rem;
        font-weight: 600;
        color: var(--accent);
        padding: 6px 0;
      }
      .note {
        border: 1px solid var(--border);
        border-radius: 8px;
        padding: 8px 12px;
        margin: 0 0 12px;
      }
    `,
  ];

  private readonly session = new GpuSession(this, location.search);
  private readonly reports = new Reports(this);
  private readonly page = parsePageParams(location.search);
  @state() private setup: RunSetup | null = null;
  @state() private manyOpen = false;
  @state() private manyUrl: string | null = null;
  private readonly roofsOffer = new RoofsOffer(this);
  /** The comparison view's chunk, once asked for (a failed load is reported once, not retried on every update). */
  private compareView: Promise<unknown> | null = null;
  @state() private dragging = false;
  /** Cancel was pressed and the run has not stopped yet. */
  @state() private cancelling = false;
  /** The report of the run in progress was scrolled into view once (it is not again). */
  private scrolledFor: number | null = null;
  @query('#cancel') private cancelButton?: HTMLButtonElement;

  override connectedCallback(): void {
    super.connectedCallback();
    const api: AutomationApi = {
      runJob: (job, onProgress, options) => this.start(job, null, 'a job from automation', onProgress, options?.roofsCache),
      capabilities: async () => (await this.session.ensureDevice()).caps,
      cancel: () => this.cancel(),
      loseDevice: () => this.session.loseDevice(),
      runsStarted: () => this.session.runsStarted,
      matvecBench: async (opts, log) => {
        const { matvecBench } = await import('../measure/matvec-bench.ts');
        await matvecBench(await this.session.ensureDevice(), opts, log);
      },
    };
    (window as unknown as { tokenscope: AutomationApi }).tokenscope = api;
    window.addEventListener('hashchange', this.onHash);
    window.addEventListener('dragover', this.onDragOver);
    window.addEventListener('dragleave', this.onDragLeave);
    window.addEventListener('drop', this.onDrop);
    this.onHash();
    // The CLI's report.html carries its result in the page (cli/report-html.ts).
    const embedded = document.getElementById('tokenscope-result');
    if (embedded?.textContent) this.reports.openEmbedded(embedded.textContent);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('hashchange', this.onHash);
    window.removeEventListener('dragover', this.onDragOver);
    window.removeEventListener('dragleave', this.onDragLeave);
    window.removeEventListener('drop', this.onDrop);
  }

  /** `#results` (or `#results=URL of a list`) opens the many-results view; `#r=` and `#c=` a report or comparison. */
  private readonly onHash = () => {
    const hash = location.hash;
    const many = /^#results(?:=(.*))?$/s.exec(hash);
    if (many) this.openMany(many[1] ? safeDecode(many[1]) : null);
    else if (hash) void this.reports.openFragment(hash);
  };

  private openMany(listUrl: string | null): void {
    this.manyUrl = listUrl;
    this.manyOpen = true;
    // The view and its chart are a chunk of their own: the page's first load does not carry them.
    void import('./many-view.ts').then(
      () => this.updateComplete.then(() => this.renderRoot.querySelector('#many-title')?.scrollIntoView({ block: 'start' })),
      (e: unknown) => this.reports.fail('The many-results view could not be loaded', e),
    );
  }

  private closeMany(): void {
    this.manyOpen = false;
    if (location.hash.startsWith('#results')) history.replaceState(null, '', `${location.pathname}${location.search}`);
  }

  /** The page's reports for the many-results view; runs made here are "yours". */
  private ownResults(): LabelledResult[] {
    return this.reports.entries.flatMap((e) => (e.result && e.state !== 'running' ? [{ label: e.label, result: e.result, mine: e.origin === 'run' }] : []));
  }

  private readonly onDragOver = (e: DragEvent) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    this.dragging = true;
  };

  private readonly onDragLeave = (e: DragEvent) => {
    if (e.relatedTarget === null) this.dragging = false;
  };

  private readonly onDrop = (e: DragEvent) => {
    this.dragging = false;
    if (!e.dataTransfer?.files.length) return;
    e.preventDefault();
    void this.reports.importFiles([...e.dataTransfer.files]);
  };

  protected override willUpdate(): void {
    // The two-report comparison is a chunk of its own, loaded when a comparison is first shown.
    if (this.reports.comparison && !this.compareView)
      this.compareView = import('./compare-view.ts').catch((e: unknown) => this.reports.fail('The comparison could not be shown', e));
    if (!this.setup && this.session.environment) this.setup = defaultSetup({ cpuLike: this.session.environment.cpu_adapter }, this.page.params);
  }

  protected override updated(): void {
    void this.roofsOffer.refresh(this.session.environment, this.setup && jobOf(this.setup).job);
  }

  private cancel(): void {
    if (this.session.status !== 'running') return;
    this.cancelling = true;
    this.session.cancel();
  }

  /** The roofs of the latest report measured on this device in this page (for the run's duration floor). */
  private localRoofs(): ReportRoofs | null {
    const own = [...this.reports.entries].reverse().find((e) => e.origin === 'run' && e.result?.ceilings);
    return own?.result?.ceilings ? roofsOf(own.result.ceilings) : null;
  }

  /** Bring the report into view when the first results of a run arrive (once per run). */
  private revealResults(entry: ReportEntry): void {
    if (this.scrolledFor === entry.id) return;
    this.scrolledFor = entry.id;
    void this.updateComplete.then(() => this.renderRoot.querySelector('#report-title')?.scrollIntoView({ behavior: 'smooth', block: 'start' }));
  }

  /** Run a job as a new report; the page shows it filling in. */
  private async start(
    job: BenchJob,
    file: File | null,
    what: string,
    onProgress?: (step: string, fraction: number) => void,
    roofsCache?: RoofsCacheMode,
  ): Promise<BenchResult> {
    if (this.session.status === 'running') return this.session.run(job);
    const entry = this.reports.startRun(what);
    this.reports.closeComparison();
    // The address no longer shows an opened link's report: a fresh run is on show.
    if (location.hash) history.replaceState(null, '', `${location.pathname}${location.search}`);
    void this.updateComplete.then(() => this.cancelButton?.focus());
    try {
      const result = await this.session.run(job, {
        onProgress,
        roofsCache,
        modelSource: file ? blobSource(file) : undefined,
        onPartial: (r) => {
          this.reports.update(entry, r);
          this.revealResults(entry);
        },
      });
      this.reports.update(entry, result);
      this.reports.finish(entry, 'done');
      if (roofsCache) this.roofsOffer.ranWithCache();
      return result;
    } catch (e) {
      this.reports.finish(entry, isTokenscopeError(e, 'cancelled') ? 'cancelled' : 'failed', e);
      throw e;
    } finally {
      this.cancelling = false;
      void this.updateComplete.then(() => {
        if (!this.shadowRoot?.activeElement) this.renderRoot.querySelector('ts-run-setup')?.shadowRoot?.querySelector<HTMLButtonElement>('button.run')?.focus();
      });
    }
  }

  private async runSetup(): Promise<void> {
    if (!this.setup) return;
    const { job, file } = jobOf(this.setup);
    try {
      // Roofs-only runs measure: that is what they are for.
      await this.start(job, file, describeSetup(this.setup), undefined, this.roofsOffer.modeFor(this.setup.mode === 'roofs'));
    } catch {
      // The report entry keeps the error for display; the page stays usable.
    }
  }

  /** In-page navigation that leaves the address (and the report a link opened) alone. */
  private readonly jump = (e: Event) => {
    e.preventDefault();
    const id = (e.currentTarget as HTMLAnchorElement).getAttribute('href')!.slice(1);
    const target = this.renderRoot.querySelector(`#${id}`);
    const folded = target?.closest('details');
    if (folded) folded.open = true;
    target?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  };

  private linkMade(fragment: string): void {
    history.replaceState(null, '', fragment);
  }

  private entryBanner(e: ReportEntry) {
    if (e.state === 'running') return html`<p class="muted">Running — the tables and charts below fill in as results arrive.</p>`;
    const kept = hasResults(e.result);
    if (e.state === 'cancelled')
      return html`<div class="banner warn" role="status">
        You cancelled this run.${kept ? ' What finished before is kept below.' : ' Nothing had finished yet.'}
      </div>`;
    if (e.state === 'failed' && e.error) {
      return html`<div class="banner error" role="alert">
        <strong>This run failed: ${e.error.message}</strong
        >${e.error.hint ? html`<p>${e.error.hint}</p>` : ''}${kept ? html`<p>The results gathered before it stopped are kept below.</p>` : ''}
      </div>`;
    }
    if (e.origin !== 'run')
      return html`<p class="muted">
        Opened from a ${e.origin === 'link' ? 'link' : 'file'}: these numbers were measured on the device described at the bottom, on
        ${e.result ? humanDate(e.result.created_at) : '?'}. Nothing ran in your browser.
      </p>`;
    return '';
  }

  /** "Shared report: stories15M q4_0 on SwiftShader, 3 Dec 2026, 06:27 UTC" over a report (or comparison) opened from a link or file. */
  private sharedBanner(shown: ReportEntry | null) {
    const comparison = this.reports.comparison;
    if (comparison && comparison[0].result && comparison[1].result) {
      return html`<div class="shared-banner" id="shared-banner" role="note">
        <strong>Shared comparison:</strong> A — ${reportTitle(comparison[0].result)}, ${humanDate(comparison[0].result.created_at)}; B —
        ${reportTitle(comparison[1].result)}, ${humanDate(comparison[1].result.created_at)}.
        <span class="muted">Nothing runs in your browser until you choose to.</span>
      </div>`;
    }
    if (!shown?.result || shown.origin === 'run') return '';
    return html`<div class="shared-banner" id="shared-banner" role="note">
      <strong>${shown.origin === 'link' ? 'Shared report' : 'Imported report'}: ${reportTitle(shown.result)}, ${humanDate(shown.result.created_at)}</strong>
      <span class="muted">— measured there; nothing runs in your browser until you choose to.</span>
    </div>`;
  }

  private runSection() {
    const s = this.session;
    const running = s.status === 'running';
    const plan = this.setup ? phasePlan(this.setup) : [];
    const k = stepOf(plan, s.progress.step);
    return html`<section class="card" aria-labelledby="run-title">
        <h2 id="run-title">Run a benchmark</h2>
        <ts-run-setup
          .setup=${this.setup}
          .environment=${s.environment}
          .roofs=${this.localRoofs()}
          .reusableRoofs=${this.roofsOffer.measuredAt}
          .measureRoofsAgain=${this.roofsOffer.measureAgain}
          @measure-roofs-again=${(e: CustomEvent<boolean>) => this.roofsOffer.setMeasureAgain(e.detail)}
          ?running=${running}
          ?ready=${s.status === 'ready'}
          @setup-change=${(e: CustomEvent<RunSetup>) => (this.setup = e.detail)}
          @run=${this.runSetup}
        ></ts-run-setup>
      </section>
      ${
        running
          ? html`<div class="progress card" role="group" aria-label="Run progress">
              <ts-progress
                .step=${this.cancelling ? 'Cancelling…' : `${k ? `Step ${k} of ${plan.length} — ` : ''}${s.progress.step}`}
                .fraction=${s.progress.fraction}
                .startedAt=${s.progress.startedAt}
              ></ts-progress>
              <div class="actions">
                <button id="cancel" class="secondary" ?disabled=${this.cancelling} @click=${() => this.cancel()}>
                  ${this.cancelling ? 'Cancelling…' : 'Cancel'}
                </button>
              </div>
            </div>`
          : ''
      }`;
  }

  /** The report list, what is on show, and share / export / import. */
  private reportControls(shown: ReportEntry | null, shared: boolean) {
    return html`<section class="card" aria-labelledby="report-title">
      <h2 id="report-title">${shared ? 'This report' : 'Report'}</h2>
      ${
        this.reports.entries.length > 1
          ? html`<div class="report-head">
              <label
                >Showing
                <select id="shown" @change=${(e: Event) => this.reports.show(Number((e.target as HTMLSelectElement).value))}>
                  ${this.reports.entries.map((e) => html`<option value=${e.id} ?selected=${e.id === shown?.id}>${e.label}</option>`)}
                </select>
              </label>
            </div>`
          : shown
            ? html`<p id="shown"><strong>${shown.label}</strong></p>`
            : ''
      }
      ${shown ? this.entryBanner(shown) : html`<p class="muted">No report yet. Press Run, open a shared link, or import (or drop here) a JSON file exported by tokenscope.</p>`}
      <ts-share-bar
        .result=${shown?.result ?? null}
        @link-made=${(e: CustomEvent<string>) => this.linkMade(e.detail)}
        @import-files=${(e: CustomEvent<File[]>) => this.reports.importFiles(e.detail)}
      ></ts-share-bar>
    </section>`;
  }

  override render() {
    const s = this.session;
    const shown = this.reports.shown;
    const notice = this.reports.notice;
    const comparison = this.reports.comparison;
    // A report or comparison from a link or file is what the visitor came for: it goes first, the run form folds below.
    const sharedFirst = s.status !== 'running' && ((shown !== null && shown.origin !== 'run') || comparison !== null);
    const noWebGpu = s.status === 'unavailable' && s.error;
    const device = noWebGpu
      ? sharedFirst
        ? html`<p class="note muted" role="note">
            This browser cannot run benchmarks (${s.error!.message}); the shared numbers above read the same without it.
          </p>`
        : html`<div class="banner error" role="alert">
            <strong>${s.error!.message}</strong>
            <p>${s.error!.hint}</p>
          </div>`
      : html`<ts-device-panel .environment=${s.environment}></ts-device-panel>`;
    const runHere = html`${s.status !== 'unavailable' ? this.runSection() : ''}${device}`;
    return html`<main class=${this.dragging ? 'drop' : ''}>
      <header>
        <h1>tokenscope</h1>
        <nav aria-label="Views">
          <a href="#run-title" @click=${this.jump}>Run</a>
          <a href="#report-title" @click=${this.jump}>Report</a>
          <a href="#results" id="nav-many">Many results</a>
          <a href="#compare-title" @click=${this.jump}>Compare two</a>
        </nav>
        ${
          sharedFirst
            ? html`<p class="why muted">Where the time goes when a GPU runs a language model, measured in the browser with WebGPU.</p>`
            : html`<p class="why">
                Where the time goes when your GPU runs a language model, measured in this tab with WebGPU: how fast this device reads memory and computes, how
                long the first token and each next token take, and which of the two limits each phase — so you know whether a smaller format, a bigger batch or
                a better kernel would help.
              </p>`
        }
      </header>
      ${
        this.page.problems.length || s.paramError
          ? html`<div class="banner warn" role="note">
              ${[...this.page.problems, ...(s.paramError ? [s.paramError.message] : [])].map((p) => html`<div>${p}</div>`)}
            </div>`
          : ''
      }
      ${
        notice
          ? html`<div class="banner error" role="alert">
              <strong>${notice.message}</strong>${notice.hint ? html`<p>${notice.hint}</p>` : ''}
              <button class="small secondary" @click=${() => this.reports.dismissNotice()}>Dismiss</button>
            </div>`
          : ''
      }
      ${
        this.manyOpen
          ? html`<section class="card" aria-labelledby="many-title">
              <h2 id="many-title">Many results</h2>
              <ts-many-view .own=${this.ownResults()} .listUrl=${this.manyUrl} @close=${() => this.closeMany()}></ts-many-view>
            </section>`
          : ''
      }
      ${sharedFirst ? this.sharedBanner(shown) : runHere}
      ${
        comparison
          ? html`<section class="card" aria-labelledby="compare-view-title">
              <h2 id="compare-view-title">Comparison</h2>
              <ts-compare-view
                .a=${comparison[0]}
                .b=${comparison[1]}
                @link-made=${(e: CustomEvent<string>) => this.linkMade(e.detail)}
                @close=${() => this.reports.closeComparison()}
              ></ts-compare-view>
            </section>`
          : ''
      }
      ${sharedFirst ? html`<ts-report .result=${shown?.result ?? null}></ts-report>${this.reportControls(shown, true)}` : html`${this.reportControls(shown, false)}<ts-report .result=${shown?.result ?? null}></ts-report>`}
      ${
        sharedFirst
          ? html`<details class="card run-here" id="run-here">
              <summary>Run on your device</summary>
              ${runHere}
            </details>`
          : ''
      }
      <section class="card" aria-labelledby="what-if-title">
        <h2 id="what-if-title">What if…</h2>
        <ts-what-if .result=${shown?.result ?? null}></ts-what-if>
      </section>
      <section class="card" aria-labelledby="compare-title">
        <h2 id="compare-title">Compare two reports</h2>
        <ts-compare-panel
          .entries=${this.reports.entries}
          @compare=${(e: CustomEvent<{ a: number; b: number }>) => this.reports.compare(e.detail.a, e.detail.b)}
          @open-link=${(e: CustomEvent<string>) => this.reports.openLink(e.detail)}
        ></ts-compare-panel>
      </section>
      <footer class="muted">
        Everything runs in this tab; nothing is uploaded. A shared link carries the whole report in its fragment (after #), which browsers never send to a
        server.
      </footer>
    </main>`;
  }
}

/** A percent-encoded URL from the address, or the text as given when it is not valid encoding. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Whether a (partial) result holds anything measured, beyond the environment it was made in. */
function hasResults(r: BenchResult | null): boolean {
  return !!r && Object.keys(r).some((k) => !['schema_version', 'tool', 'created_at', 'environment', 'notes'].includes(k));
}
