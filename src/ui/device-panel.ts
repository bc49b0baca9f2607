import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Environment } from '../measure/schema.ts';
import { shared } from './styles.ts';

const KEY_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxStorageBuffersPerShaderStage',
];

function formatLimit(name: string, v: number): string {
  return name.endsWith('Size') && v >= 1024 * 1024 ? `${(v / 2 ** 20).toFixed(0)} MiB` : v.toLocaleString('en-US');
}

/**
 * A device card (this tab's device, or the one a report was measured on): the adapter in one line,
 * the CPU-adapter warning, and features, key limits and browser behind a disclosure. Text only.
 */
@customElement('ts-device-panel')
export class DevicePanel extends LitElement {
  static override styles = [
    shared,
    css`
      th,
      td {
        overflow-wrap: anywhere;
      }
      th {
        width: 40%;
      }
      .summary {
        margin: 0 0 8px;
      }
      summary {
        cursor: pointer;
        color: var(--accent);
        width: fit-content;
      }
      details[open] summary {
        margin-bottom: 8px;
      }
    `,
  ];
  @property({ attribute: false }) environment: Environment | null = null;
  @property() heading = 'Your device';

  override render() {
    const e = this.environment;
    if (!e)
      return html`<section class="card" aria-busy="true">
        <h2>${this.heading}</h2>
        <p class="muted">Looking for a WebGPU adapter…</p>
      </section>`;
    const a = e.adapter;
    return html`<section class="card" aria-labelledby="device-title">
      <h2 id="device-title">${this.heading}</h2>
      ${
        e.cpu_adapter
          ? html`<div class="banner warn" role="note">
              This adapter is a CPU implementation of WebGPU (${a.architecture || a.description || a.vendor}). Numbers describe this CPU, not a GPU.
            </div>`
          : ''
      }
      <p class="summary">
        <strong>${a.description || a.device || a.architecture || a.vendor || 'Unknown adapter'}</strong>
        <span class="muted"
          >— ${[a.vendor, a.architecture].filter(Boolean).join(', ') || 'vendor not reported'}${a.isFallbackAdapter ? ', fallback adapter' : ''}</span
        >
      </p>
      ${
        e.timestamp_quantization?.quantized
          ? html`<p class="muted" role="note">
              GPU timestamps here are rounded to ${(e.timestamp_quantization.quantum_ns / 1000).toFixed(1)} µs: a kernel shorter than that reads 0 or one step,
              so per-kernel times are averages over many passes.
            </p>`
          : ''
      }
      <details>
        <summary>Features, limits and browser</summary>
        <div class="scroll">
          <table>
            <tbody>
              <tr>
                <th scope="row">Vendor</th>
                <td>${a.vendor || '—'}</td>
              </tr>
              <tr>
                <th scope="row">Architecture</th>
                <td>${a.architecture || '—'}</td>
              </tr>
              <tr>
                <th scope="row">Device</th>
                <td>${a.device || '—'}</td>
              </tr>
              <tr>
                <th scope="row">Description</th>
                <td>${a.description || '—'}</td>
              </tr>
              <tr>
                <th scope="row">Fallback adapter</th>
                <td>${a.isFallbackAdapter ? 'yes' : 'no'}</td>
              </tr>
              <tr>
                <th scope="row">Features</th>
                <td class="mono">
                  ${e.features.join(', ') || 'none'}${e.disabled_features.length ? html`<br /><span class="muted">disabled by request: ${e.disabled_features.join(', ')}</span>` : ''}
                </td>
              </tr>
              ${KEY_LIMITS.filter((k) => k in e.limits).map(
                (k) =>
                  html`<tr>
                    <th scope="row" class="mono">${k}</th>
                    <td class="num">${formatLimit(k, e.limits[k])}</td>
                  </tr>`,
              )}
              <tr>
                <th scope="row">Browser</th>
                <td class="mono">${e.user_agent}</td>
              </tr>
            </tbody>
          </table>
        </div>
      </details>
    </section>`;
  }
}
