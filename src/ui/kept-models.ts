import { LitElement, html, css } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { forgetAll, forgetFile, keptFiles, modelCacheAvailable, type KeptFile } from '../model/gguf/model-cache.ts';
import { describeError } from '../errors.ts';
import { bytes } from './format.ts';
import { shared } from './styles.ts';

/**
 * "Files kept in this browser": the GGUF downloads the page keeps (Cache API) so later visits read
 * them from disk, each with its size, and buttons to remove one or all. The list is read when
 * the disclosure opens. Renders nothing where the browser cannot keep files.
 */
@customElement('ts-kept-models')
export class KeptModels extends LitElement {
  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      summary {
        cursor: pointer;
      }
      summary:focus-visible {
        outline: 3px solid var(--accent);
        outline-offset: 2px;
      }
      td.url {
        word-break: break-all;
      }
    `,
  ];
  @state() private files: KeptFile[] | null = null;
  @state() private error: string | null = null;

  private async refresh(): Promise<void> {
    try {
      this.files = await keptFiles();
      this.error = null;
    } catch (e) {
      this.error = describeError(e);
    }
  }

  private onToggle(e: Event): void {
    if ((e.target as HTMLDetailsElement).open) void this.refresh();
  }

  private async forget(url: string | null): Promise<void> {
    try {
      if (url === null) await forgetAll();
      else await forgetFile(url);
    } catch (e) {
      this.error = describeError(e);
    }
    await this.refresh();
  }

  override render() {
    if (!modelCacheAvailable()) return '';
    const files = this.files;
    const total = files?.reduce((n, f) => n + f.bytes, 0) ?? 0;
    return html`<details @toggle=${this.onToggle}>
      <summary>Files kept in this browser${files ? ` (${files.length}, ${bytes(total)})` : ''}</summary>
      ${this.error ? html`<p class="banner error" role="alert">${this.error}</p>` : ''}
      ${
        files === null
          ? html`<p class="muted">Reading…</p>`
          : files.length === 0
            ? html`<p class="muted" id="kept-empty">Nothing is kept: a GGUF you run by URL is downloaded once and kept here.</p>`
            : html`<div class="scroll">
                  <table>
                    <caption class="sr-only">
                      GGUF files kept in this browser
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">File</th>
                        <th scope="col">Size</th>
                        <th scope="col">Kept</th>
                        <th scope="col"><span class="sr-only">Remove</span></th>
                      </tr>
                    </thead>
                    <tbody>
                      ${files.map(
                        (f) =>
                          html`<tr>
                            <td class="url mono" title=${f.url}>${f.url.split('/').pop()}</td>
                            <td>${bytes(f.bytes)}</td>
                            <td>${f.keptAt?.slice(0, 10) ?? '—'}</td>
                            <td>
                              <button class="small secondary" aria-label=${`Remove ${f.url.split('/').pop()}`} @click=${() => this.forget(f.url)}>
                                Remove
                              </button>
                            </td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>
                </div>
                <button class="small secondary" id="forget-all" @click=${() => this.forget(null)}>Remove all (${bytes(total)})</button>`
      }
    </details>`;
  }
}
