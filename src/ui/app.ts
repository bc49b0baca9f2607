import { LitElement, html, css } from 'lit';
import { customElement } from 'lit/decorators.js';
import type { BenchJob } from '../bench/job.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { GpuSession } from './session.ts';
import { shared } from './styles.ts';
import './device-panel.ts';
import './progress-bar.ts';
import './roofs-table.ts';
import './roofline-chart.ts';

/** The automation entry point the CLI's browser runtime calls (`window.tokenscope.runJob`). */
export interface AutomationApi {
  runJob(job: BenchJob, onProgress?: (step: string, fraction: number) => void): Promise<unknown>;
  capabilities(): Promise<Capabilities>;
}

/**
 * The tokenscope page. Runs nothing until the visitor clicks (or the CLI calls the automation
 * API); every string from the device or a result is rendered as text.
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
      .actions {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        margin: 0 0 12px;
      }
      .explain {
        font-size: 0.92rem;
        max-width: 75ch;
      }
    `,
  ];

  private readonly session = new GpuSession(this, location.search);

  override connectedCallback(): void {
    super.connectedCallback();
    const api: AutomationApi = {
      runJob: (job, onProgress) => this.session.run(job, onProgress),
      capabilities: async () => (await this.session.ensureDevice()).caps,
    };
    (window as unknown as { tokenscope: AutomationApi }).tokenscope = api;
  }

  /** `?probe-mib=N` caps the bandwidth working set (the tests use a small one). */
  private readonly probeMiB = Number(new URLSearchParams(location.search).get('probe-mib')) || undefined;

  private async measure(): Promise<void> {
    try {
      await this.session.run({ probe: true, probeMiB: this.probeMiB });
    } catch {
      // The session keeps the error for display; the page stays usable.
    }
  }

  override render() {
    const s = this.session;
    const running = s.status === 'running';
    return html`<main>
      <header>
        <h1>tokenscope</h1>
        <p class="muted">Where the time goes when your GPU runs a language model — measured in this tab, with WebGPU.</p>
      </header>
      ${s.status === 'unavailable' && s.error
        ? html`<div class="banner error" role="alert">
            <strong>${s.error.message}</strong>
            <p>${s.error.hint}</p>
          </div>`
        : ''}
      ${s.status !== 'unavailable' ? html`<ts-device-panel .environment=${s.environment}></ts-device-panel>` : ''}
      <section class="card" aria-labelledby="roofs-title">
        <h2 id="roofs-title">The device's roofs</h2>
        <p class="explain muted">
          Every kernel is limited by one of two roofs: how fast memory can be streamed (GB/s) or how fast the GPU can do arithmetic (GFLOP/s).
          A kernel's <em>arithmetic intensity</em> — FLOPs per byte it moves — says which: below the ridge point it is memory-bound, above it compute-bound.
          Decode reads every weight once per token (≈ 2–4 FLOP/byte), far left of the ridge; prefill reuses each weight across the prompt, far right.
        </p>
        <div class="actions">
          <button @click=${this.measure} ?disabled=${running || s.status !== 'ready'}>Measure roofs</button>
          ${running ? html`<button class="secondary" @click=${() => s.cancel()}>Cancel</button>` : ''}
        </div>
        ${running ? html`<ts-progress .step=${s.progress.step} .fraction=${s.progress.fraction} .startedAt=${s.progress.startedAt}></ts-progress>` : ''}
        ${s.status !== 'unavailable' && s.error
          ? html`<div class="banner error" role="alert"><strong>${s.error.message}</strong>${s.error.hint ? html`<p>${s.error.hint}</p>` : ''}</div>`
          : ''}
        ${s.result?.ceilings
          ? html`<ts-roofs-table .ceilings=${s.result.ceilings}></ts-roofs-table>
              <ts-roofline-chart .ceilings=${s.result.ceilings}></ts-roofline-chart>`
          : ''}
      </section>
    </main>`;
  }
}
