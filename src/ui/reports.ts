import type { ReactiveControllerHost } from 'lit';
import type { BenchResult } from '../measure/schema.ts';
import { TokenscopeError } from '../errors.ts';
import { decodeComparison } from '../share/compare.ts';
import { MAX_IMPORT_CHARS, parseImportedJson } from '../share/export.ts';
import { decodeReport } from '../share/permalink.ts';
import { toShown, type ShownError } from './session.ts';

export type EntryState = 'running' | 'done' | 'failed' | 'cancelled';

/** A report the page knows about: a run made here, or one opened from a link or a file. */
export interface ReportEntry {
  id: number;
  label: string;
  origin: 'run' | 'link' | 'file';
  state: EntryState;
  /** The result (partial while running or after a failure); null before anything arrived. */
  result: BenchResult | null;
  /** Why the run stopped (failed or cancelled). */
  error: ShownError | null;
}

/**
 * A copy whose latency section and arrays are new objects, so the elements that draw them see a
 * change: the bench layer fills one result object in place as the run goes.
 */
function snapshot(r: BenchResult): BenchResult {
  const l = r.latency;
  return l ? { ...r, latency: { ...l, rows: l.rows && [...l.rows], requests: l.requests && [...l.requests] } } : { ...r };
}

function describe(r: BenchResult): string {
  const model = r.model?.name;
  const a = r.environment.adapter;
  const device = a.description || a.architecture || a.vendor || 'unknown device';
  return `${model ? `${model} on ` : ''}${device}`.slice(0, 120);
}

/**
 * The reports of this page, the one shown, the comparison, and reading them from links and
 * files. Everything that came from outside is validated by the share layer before it is kept.
 */
export class Reports {
  entries: ReportEntry[] = [];
  shownId: number | null = null;
  comparison: [ReportEntry, ReportEntry] | null = null;
  /** Why the last link or file could not be opened. */
  notice: ShownError | null = null;
  private nextId = 1;

  constructor(private readonly host: ReactiveControllerHost) {}

  get shown(): ReportEntry | null {
    return this.entries.find((e) => e.id === this.shownId) ?? null;
  }

  byId(id: number): ReportEntry | undefined {
    return this.entries.find((e) => e.id === id);
  }

  private add(entry: Omit<ReportEntry, 'id'>, show = true): ReportEntry {
    const e = { ...entry, id: this.nextId++ };
    this.entries = [...this.entries, e];
    if (show) this.shownId = e.id;
    this.host.requestUpdate();
    return e;
  }

  show(id: number): void {
    this.shownId = id;
    this.host.requestUpdate();
  }

  startRun(what: string): ReportEntry {
    const time = new Date().toLocaleTimeString('en-GB');
    this.notice = null;
    return this.add({ label: `Your run at ${time} — ${what}`, origin: 'run', state: 'running', result: null, error: null });
  }

  update(entry: ReportEntry, result: BenchResult): void {
    entry.result = snapshot(result);
    this.host.requestUpdate();
  }

  finish(entry: ReportEntry, state: EntryState, error: unknown = null): void {
    entry.state = state;
    entry.error = error === null ? null : toShown(error);
    this.entries = [...this.entries];
    this.host.requestUpdate();
  }

  /** Keep why something could not be opened, shown as the page's notice. */
  fail(what: string, e: unknown): void {
    const shown = toShown(e);
    this.notice = { ...shown, message: `${what}: ${shown.message}` };
    this.host.requestUpdate();
  }

  private addResult(result: BenchResult, origin: 'link' | 'file', label: string, show = true): ReportEntry {
    return this.add({ label: `${label} — ${describe(result)}`, origin, state: 'done', result, error: null }, show);
  }

  /** Open `#r=…` or `#c=…` (from the address bar or a pasted link); false when the hash is neither. */
  async openFragment(hash: string): Promise<boolean> {
    const body = hash.replace(/^#/, '');
    try {
      if (body.startsWith('r=')) {
        this.addResult(await decodeReport(hash), 'link', 'Shared report');
        this.comparison = null;
      } else if (body.startsWith('c=')) {
        const { a, b } = await decodeComparison(hash);
        // A is shown under the comparison, so the page never reads "No report yet" below a comparison.
        const ea = this.addResult(a, 'link', 'Compared report A');
        const eb = this.addResult(b, 'link', 'Compared report B', false);
        this.comparison = [ea, eb];
      } else {
        return false;
      }
      this.notice = null;
    } catch (e) {
      this.fail('This link could not be opened', e);
    }
    this.host.requestUpdate();
    return true;
  }

  /** A pasted link (or bare fragment) to add to the reports. */
  async openLink(text: string): Promise<void> {
    const hash = text.trim().replace(/^[^#]*/, '');
    if (!(await this.openFragment(hash)))
      this.fail('This is not a tokenscope link', new TokenscopeError('bad-input', 'It has no #r= or #c= part.', 'Paste the whole link the Share button made.'));
  }

  /** A result saved into the page itself (the CLI's `--out` report.html): opened as an imported report. */
  openEmbedded(json: string): void {
    try {
      this.addResult(parseImportedJson(json), 'file', 'Saved report');
    } catch (e) {
      this.fail('The saved report could not be opened', e);
    }
  }

  /** JSON files exported by tokenscope (file chooser or drag and drop). */
  async importFiles(files: readonly File[]): Promise<void> {
    for (const file of files) {
      const name = file.name.slice(0, 80);
      try {
        if (file.size > MAX_IMPORT_CHARS * 4)
          throw new TokenscopeError(
            'bad-input',
            `The file is ${file.size} bytes; tokenscope imports at most ${MAX_IMPORT_CHARS} characters.`,
            'Choose a JSON file exported by tokenscope.',
          );
        this.addResult(parseImportedJson(await file.text()), 'file', `File ${name}`);
        this.notice = null;
      } catch (e) {
        this.fail(`The file “${name}” could not be opened`, e);
      }
    }
  }

  compare(a: number, b: number): void {
    const ea = this.byId(a);
    const eb = this.byId(b);
    if (ea?.result && eb?.result) this.comparison = [ea, eb];
    this.host.requestUpdate();
  }

  closeComparison(): void {
    this.comparison = null;
    this.host.requestUpdate();
  }

  dismissNotice(): void {
    this.notice = null;
    this.host.requestUpdate();
  }
}
