import { LitElement, html, css } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { KNOWN_FILES, PRESETS, findKnownFile, parameterCount } from '../model/catalog.ts';
import { parseHfRepoRef, resolveHfRepo } from '../model/hf-repo.ts';
import type { Environment } from '../measure/schema.ts';
import { describeError } from '../errors.ts';
import type { Quantization } from '../model/gpu-weights.ts';
import { bytes, count } from './format.ts';
import { QUANTS, type ModelPick } from './setup.ts';
import { shared } from './styles.ts';
import { loadWebLLMChoices, type WebLLMChoice } from './webllm-models.ts';
import './kept-models.ts';
import './model-inspect.ts';

const QUANT_LABELS: Record<Quantization, string> = {
  f32: 'f32 (4 bytes per weight)',
  f16: 'f16 (2 bytes per weight)',
  bf16: 'bf16 (2 bytes per weight)',
  q8_0: 'q8_0 (34 bytes per 32 weights)',
  q4_0: 'q4_0 (18 bytes per 32 weights)',
  q4_1: 'q4_1 (20 bytes per 32 weights)',
  q5_0: 'q5_0 (22 bytes per 32 weights)',
  q5_1: 'q5_1 (24 bytes per 32 weights)',
  q4_k: 'q4_k (144 bytes per 256 weights)',
  q5_k: 'q5_k (176 bytes per 256 weights)',
  q6_k: 'Q6_K mix (210 bytes per 256 weights)',
  q4_k_m: 'Q4_K_M mix (llama-quantize)',
  q4_k_s: 'Q4_K_S mix (llama-quantize)',
  q5_k_m: 'Q5_K_M mix (llama-quantize)',
};

function valueOf(pick: ModelPick): string {
  return pick.kind === 'preset' || pick.kind === 'known' || pick.kind === 'webllm' ? `${pick.kind}:${pick.id}` : pick.kind;
}

/**
 * Which model to run: a synthetic-weight preset (real shapes, random weights: speed only), a
 * known public GGUF, a GGUF by URL or a local GGUF file, or one of WebLLM's prebuilt models — whose
 * list (and WebLLM's runtime) is loaded only when the visitor asks for it; the ones that cannot run
 * on this device are listed disabled with the reason. A GGUF by URL (or a known one) can be
 * inspected from its header before the download; downloads are kept in the browser, listed below
 * with their sizes.
 *
 * @fires pick-change - detail: the new `ModelPick`.
 */
@customElement('ts-model-picker')
export class ModelPicker extends LitElement {
  static override styles = [
    shared,
    css`
      .grid {
        display: grid;
        grid-template-columns: minmax(0, 2fr) minmax(0, 1fr);
        gap: 10px 14px;
      }
      @media (max-width: 620px) {
        .grid {
          grid-template-columns: minmax(0, 1fr);
        }
      }
      .wide {
        grid-column: 1 / -1;
      }
      .check {
        display: flex;
        flex-direction: row;
        align-items: center;
        gap: 8px;
        margin-top: 6px;
        font-weight: normal;
      }
    `,
  ];
  @property({ attribute: false }) pick: ModelPick = { kind: 'preset', id: 'stories15m', quant: 'q4_0' };
  @property({ type: Boolean }) disabled = false;
  /** The device, for which WebLLM models can run on it. */
  @property({ attribute: false }) environment: Environment | null = null;
  @state() private webllm: WebLLMChoice[] | 'loading' | { error: string } | null = null;
  /** What the address field's ORG/REPO[:QUANT] resolved to, or why it did not. */
  @state() private addressNote = '';

  private emit(pick: ModelPick): void {
    this.dispatchEvent(new CustomEvent<ModelPick>('pick-change', { detail: pick, bubbles: true, composed: true }));
  }

  private onModel(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    const [kind, id] = value.split(/:(.*)/s);
    const quant = this.pick.quant;
    if (value === 'webllm-list') {
      (e.target as HTMLSelectElement).value = valueOf(this.pick);
      void this.loadWebLLM();
    } else if (kind === 'webllm') this.emit({ kind, id, quant: null, sideBySide: true });
    else if (kind === 'preset') this.emit({ kind, id, quant: quant ?? 'q4_0' });
    else if (kind === 'known') this.emit({ kind, id, quant: null });
    else if (kind === 'url') this.emit({ kind, url: '', quant: null });
    else this.emit({ kind: 'file', file: null, quant: null });
  }

  /** An https:// or hf:// address as typed (setup.ts reads both); `ORG/REPO[:QUANT]` (llama.cpp's -hf) resolved to its file's URL first. */
  private async onAddress(text: string): Promise<void> {
    const repo = parseHfRepoRef(text);
    this.addressNote = '';
    if (!repo) {
      this.emit({ kind: 'url', url: text, quant: this.pick.quant });
      return;
    }
    try {
      this.addressNote = 'Reading the repository’s file list…';
      const resolved = await resolveHfRepo(repo);
      this.addressNote = `${text.trim()} → ${resolved.file}`;
      this.emit({ kind: 'url', url: resolved.url, quant: this.pick.quant });
    } catch (e) {
      this.addressNote = describeError(e);
    }
  }

  private async loadWebLLM(): Promise<void> {
    if (!this.environment || this.webllm === 'loading') return;
    this.webllm = 'loading';
    try {
      this.webllm = await loadWebLLMChoices(this.environment);
    } catch (e) {
      this.webllm = { error: describeError(e) };
    }
  }

  private webllmOptions() {
    const w = this.webllm;
    if (w === null) return html`<option value="webllm-list">Show WebLLM’s prebuilt models… (loads WebLLM, about 6 MB)</option>`;
    if (w === 'loading') return html`<option disabled>Loading WebLLM’s model list…</option>`;
    if ('error' in w) return html`<option disabled>WebLLM could not be loaded: ${w.error}</option>`;
    return w.map(
      (m) =>
        html`<option value=${`webllm:${m.id}`} ?disabled=${m.reason !== null} ?selected=${valueOf(this.pick) === `webllm:${m.id}`}>
          ${m.label}${m.reason ? ` — ${m.reason}` : ''}
        </option>`,
    );
  }

  private onQuant(e: Event): void {
    const v = (e.target as HTMLSelectElement).value;
    const quant = v === '' ? null : (v as Quantization);
    if (this.pick.kind === 'preset') this.emit({ ...this.pick, quant: quant ?? 'q4_0' });
    else if (this.pick.kind !== 'webllm') this.emit({ ...this.pick, quant });
  }

  private hint() {
    const p = this.pick;
    if (p.kind === 'preset') {
      const preset = PRESETS.find((x) => x.id === p.id);
      return html`Synthetic weights — speed only: the exact shapes of ${preset?.title ?? p.id} with random weights generated on the GPU. Nothing is downloaded;
      the output text is meaningless.`;
    }
    if (p.kind === 'known') {
      const size = findKnownFile(p.id)?.size;
      return html`Real weights, downloaded from Hugging Face into this tab once and kept in this browser (nothing is uploaded anywhere).
      ${size ? `The file is ${bytes(size)}.` : 'Its size is unknown until the header is read: inspect it first.'}`;
    }
    if (p.kind === 'webllm') {
      return html`WebLLM (MLC’s engine) runs this model in this tab, timed with our clock and protocol. Its weights download from Hugging Face and are cached by
        the browser; a network failure or a blocked download stops the run with the reason.
        <label class="check"
          ><input
            id="side-by-side"
            type="checkbox"
            .checked=${p.sideBySide}
            ?disabled=${this.disabled}
            @change=${(e: Event) => this.emit({ ...p, sideBySide: (e.target as HTMLInputElement).checked })}
          />
          also run our engine on the same family (synthetic weights) for a side-by-side</label
        >`;
    }
    if (p.kind === 'url')
      return html`Any GGUF file by https:// address, hf://ORG/REPO/FILE.gguf or ORG/REPO[:QUANT] (the repository’s file of that quant, Q4_K_M by default); the
      server must allow this page to fetch it (CORS). Inspect it to see whether tokenscope runs it before it is downloaded; Run downloads it once and keeps it
      in this browser.`;
    return html`The file stays on this computer: the page reads it directly.`;
  }

  override render() {
    const p = this.pick;
    return html`<div class="grid">
      <label>
        Model
        <select id="model" .value=${valueOf(p)} @change=${this.onModel} ?disabled=${this.disabled}>
          <optgroup label="Synthetic weights — speed only">
            ${PRESETS.map((x) => html`<option value=${`preset:${x.id}`} ?selected=${valueOf(p) === `preset:${x.id}`}>${x.title} · ${count(parameterCount(x.config))} parameters</option>`)}
          </optgroup>
          <optgroup label="Real weights (downloaded)">
            ${KNOWN_FILES.map((f) => html`<option value=${`known:${f.id}`} ?selected=${valueOf(p) === `known:${f.id}`}>${f.title} · ${f.size ? bytes(f.size) : 'size unknown until the header is read'}</option>`)}
          </optgroup>
          <optgroup label="Your own GGUF">
            <option value="url" ?selected=${p.kind === 'url'}>A GGUF file by URL…</option>
            <option value="file" ?selected=${p.kind === 'file'}>A GGUF file on this computer…</option>
          </optgroup>
          <optgroup label="WebLLM prebuilt models">${this.webllmOptions()}</optgroup>
        </select>
      </label>
      ${
        p.kind === 'webllm'
          ? ''
          : html`<label>
              Weights
              <select id="quant" .value=${p.quant ?? ''} @change=${this.onQuant} ?disabled=${this.disabled}>
                ${p.kind === 'preset' ? '' : html`<option value="" ?selected=${p.quant === null}>as stored in the file</option>`}
                ${QUANTS.filter((q) => p.kind === 'preset' || (q !== 'f32' && q !== 'f16')).map(
                  (q) =>
                    html`<option value=${q} ?selected=${p.quant === q}>${p.kind === 'preset' ? QUANT_LABELS[q] : `quantize to ${QUANT_LABELS[q]}`}</option>`,
                )}
              </select>
            </label>`
      }
      ${
        p.kind === 'url'
          ? html`<label class="wide">
              GGUF address
              <input
                type="url"
                inputmode="url"
                placeholder="https://huggingface.co/…/model.gguf or ORG/REPO:Q4_K_M"
                .value=${p.url}
                ?disabled=${this.disabled}
                @change=${(e: Event) => void this.onAddress((e.target as HTMLInputElement).value)}
              />
              ${this.addressNote ? html`<span class="muted">${this.addressNote}</span>` : ''}
            </label>`
          : ''
      }
      ${
        p.kind === 'file'
          ? html`<label class="wide">
              GGUF file
              <input
                type="file"
                accept=".gguf"
                ?disabled=${this.disabled}
                @change=${(e: Event) => this.emit({ ...p, file: (e.target as HTMLInputElement).files?.[0] ?? null })}
              />
            </label>`
          : ''
      }
      <p class="wide muted hint">${this.hint()}</p>
      ${
        p.kind === 'url' || p.kind === 'known'
          ? html`<ts-model-inspect
              class="wide"
              .url=${p.kind === 'url' ? p.url : (findKnownFile(p.id)?.url ?? '')}
              .environment=${this.environment}
              ?disabled=${this.disabled}
            ></ts-model-inspect>`
          : ''
      }
      <ts-kept-models class="wide"></ts-kept-models>
    </div>`;
  }
}
