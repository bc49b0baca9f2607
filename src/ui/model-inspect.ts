import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Environment } from '../measure/schema.ts';
import { isKept } from '../model/gguf/model-cache.ts';
import { urlSource } from '../model/gguf/url-source.ts';
import { kvElement } from '../kernels/select.ts';
import type { ModelInspection } from '../measure/inspect.ts';
import { bytes, count, num, pct } from './format.ts';
import { lastReadRoof } from './roof-memory.ts';
import { loadPart, toShown, type ShownError } from './session.ts';
import { shared } from './styles.ts';

type InspectState =
  | { kind: 'idle' }
  | { kind: 'reading' }
  | { kind: 'done'; url: string; inspection: ModelInspection; kept: boolean; bytesRead: number }
  | { kind: 'failed'; url: string; error: ShownError };

/**
 * Before the download: reads only a GGUF's header from its URL (Range requests) and shows the
 * architecture, parameter count, each tensor type's share of the bytes, the memory the engine
 * would need against this device's limits, and the decode tokens/s the last measured read roof
 * allows — so the visitor decides whether to download it (Run downloads it once and keeps it).
 */
@customElement('ts-model-inspect')
export class ModelInspect extends LitElement {
  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      dl {
        display: grid;
        grid-template-columns: max-content minmax(0, 1fr);
        gap: 4px 12px;
        margin: 8px 0;
      }
      dt {
        font-weight: 600;
      }
      dd {
        margin: 0;
      }
    `,
  ];
  /** The GGUF's address ('' when none is entered yet). */
  @property() url = '';
  @property({ type: Boolean }) disabled = false;
  /** The device: its limits and (via the remembered roof) its read bandwidth. */
  @property({ attribute: false }) environment: Environment | null = null;
  @state() private state: InspectState = { kind: 'idle' };

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('url') && this.state.kind !== 'idle' && this.state.kind !== 'reading' && this.state.url !== this.url) this.state = { kind: 'idle' };
  }

  private async inspect(): Promise<void> {
    const url = this.url.trim();
    this.state = { kind: 'reading' };
    try {
      const env = this.environment;
      const limits = env ? { maxBufferSize: env.limits.maxBufferSize, maxStorageBufferBindingSize: env.limits.maxStorageBufferBindingSize } : null;
      // The GGUF reader loads with the first inspection, not with the page.
      const { countingSource, inspectSource } = await loadPart('the model reader', () => import('../measure/inspect.ts'));
      const { source, stats } = countingSource(await urlSource(url, { rangesOnly: true }));
      const kv = env ? kvElement({ shaderF16: env.features.includes('shader-f16') }) : undefined;
      const inspection = await inspectSource(source, { limits, kvElement: kv, readRoofGBs: lastReadRoof(env)?.gbps ?? null });
      this.state = { kind: 'done', url, inspection, kept: await isKept(url), bytesRead: stats.bytes };
    } catch (e) {
      this.state = { kind: 'failed', url, error: toShown(e) };
    }
  }

  private memory(i: ModelInspection) {
    if (i.unsupported)
      return html`<dt>Runs here</dt>
        <dd>Not yet: ${i.unsupported}</dd>`;
    const m = i.memory!;
    const fits = m.problem ? html`<strong>does not fit:</strong> ${m.problem}` : m.checked ? 'fits this device’s limits' : 'no device to check against';
    return html`<dt>Memory</dt>
      <dd>
        ${bytes(m.plan.totalBytes)} for a ${m.context}-token context (weights ${bytes(m.plan.weightBytes)}, KV cache ${bytes(m.plan.kvCacheBytes)} of
        ${m.plan.kvElement}, activations ${bytes(m.plan.activationBytes)}) — ${fits}
      </dd>`;
  }

  private decode(i: ModelInspection) {
    const d = i.decode;
    const roof = lastReadRoof(this.environment);
    if (d === null)
      return html`<dt>Decode</dt>
        <dd>not predicted: the engine cannot plan this model.</dd>`;
    if (d.tokensPerS === null) {
      return html`<dt>Decode</dt>
        <dd>${bytes(d.bytesPerToken)} read per token; no roof measured yet — run “roofs only” first and inspect again.</dd>`;
    }
    return html`<dt>Decode</dt>
      <dd>
        at most <strong>${num(d.tokensPerS)} tokens/s</strong> = read roof ${num(d.readRoofGBs)}
        GB/s${roof ? ` (measured ${roof.measuredAt.slice(0, 10)})` : ''} ÷ ${bytes(d.bytesPerToken)} per token
      </dd>`;
  }

  private report(s: Extract<InspectState, { kind: 'done' }>) {
    const i = s.inspection;
    return html`<section class="inspection" aria-label="What the header says">
      <dl>
        <dt>Model</dt>
        <dd>${i.name ?? i.source} · <span class="mono">${i.architecture}</span> · GGUF v${i.ggufVersion}</dd>
        <dt>Parameters</dt>
        <dd>${count(i.parameters)}</dd>
        <dt>File</dt>
        <dd>
          ${bytes(i.fileBytes)} (header ${bytes(i.headerBytes)}); this inspection read ${bytes(s.bytesRead)} of it by Range requests
          (${pct(s.bytesRead / i.fileBytes)})
        </dd>
        ${this.memory(i)} ${this.decode(i)}
        <dt>Download</dt>
        <dd>${s.kept ? 'Kept in this browser: Run reads it from disk.' : `Run downloads ${bytes(i.fileBytes)} once and keeps it in this browser.`}</dd>
      </dl>
      <div class="scroll">
        <table>
          <caption class="sr-only">
            Tensor types and their share of the bytes
          </caption>
          <thead>
            <tr>
              <th scope="col">Tensor type</th>
              <th scope="col">Tensors</th>
              <th scope="col">Bytes</th>
              <th scope="col">Share</th>
            </tr>
          </thead>
          <tbody>
            ${i.types.map(
              (t) =>
                html`<tr>
                  <td class="mono">${t.type}</td>
                  <td>${t.tensors}</td>
                  <td>${bytes(t.bytes)}</td>
                  <td>${pct(t.share)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>`;
  }

  override render() {
    const s = this.state;
    const ready = /^(https?:\/\/|\/|\.\.?\/)/.test(this.url.trim());
    return html`<button class="secondary small" id="inspect" ?disabled=${this.disabled || !ready || s.kind === 'reading'} @click=${this.inspect}>
        ${s.kind === 'reading' ? 'Reading the header…' : 'Inspect before downloading'}
      </button>
      ${s.kind === 'done' ? this.report(s) : ''}
      ${s.kind === 'failed' ? html`<div class="banner error" role="alert"><strong>${s.error.message}</strong>${s.error.hint ? html`<p>${s.error.hint}</p>` : ''}</div>` : ''}`;
  }
}
