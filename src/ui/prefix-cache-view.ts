import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { PrefixCacheReport, TtftGroup } from '../serve/metrics.ts';
import { num, pct } from './format.ts';
import { shared } from './styles.ts';

const mib = (bytes: number | null) => (bytes === null ? '—' : `${num(bytes / 2 ** 20)} MiB`);

/**
 * The prefix cache of a serving run: the hit rate, the TTFT of requests that hit against those
 * that missed (a table with a bar per percentile, hits and misses side by side), and the memory
 * the cache holds and the copies it made.
 */
@customElement('ts-prefix-cache-view')
export class PrefixCacheView extends LitElement {
  static override styles = [
    shared,
    css`
      .bar {
        display: inline-block;
        height: 0.7em;
        vertical-align: middle;
        border-radius: 2px;
      }
      .hit {
        background: var(--accent, #2f6fdf);
      }
      .miss {
        background: var(--muted, #888);
      }
      td.bars {
        min-width: 160px;
      }
    `,
  ];
  @property({ attribute: false }) cache: PrefixCacheReport | null = null;

  override render() {
    const p = this.cache;
    if (!p) return html``;
    const groups: [string, TtftGroup | null, string][] = [
      ['hits', p.ttft_hit, 'hit'],
      ['misses', p.ttft_miss, 'miss'],
    ];
    const stats = ['median_ttft_ms', 'p90_ttft_ms', 'p99_ttft_ms'] as const;
    const top = Math.max(1e-9, ...groups.flatMap(([, g]) => (g ? stats.map((k) => g[k]) : [])));
    const bar = (g: TtftGroup | null, cls: string, k: (typeof stats)[number]) =>
      g ? html`<span class="bar ${cls}" style="width: ${Math.max(1, (140 * g[k]) / top)}px" title="${num(g[k])} ms"></span>` : '';
    return html`<p>
        Prefix cache
        <strong>${p.enabled ? 'on' : 'off'}</strong>${p.enabled ? ` (blocks of ${p.block_tokens} tokens, copied into a sequence's slot on a hit)` : ''}: hit
        rate <strong id="prefix-hit-rate">${pct(p.hit_rate)}</strong> (${p.cached_tokens} of ${p.prompt_tokens} prompt tokens found cached),
        ${p.requests_with_hit} of ${p.requests} admitted requests with a hit.
      </p>
      <div class="scroll" tabindex="0" role="region" aria-label="TTFT of prefix-cache hits and misses">
        <table id="prefix-ttft">
          <thead>
            <tr>
              <th scope="col">Requests</th>
              <th scope="col" class="num">Count</th>
              ${stats.map((k) => html`<th scope="col" class="num">TTFT ${k.split('_')[0].replace('median', 'p50')} (ms)</th>`)}
              <th scope="col">Median TTFT</th>
            </tr>
          </thead>
          <tbody>
            ${groups.map(
              ([label, g, cls]) =>
                html`<tr>
                  <th scope="row">${label}</th>
                  <td class="num">${g?.count ?? 0}</td>
                  ${stats.map((k) => html`<td class="num">${g ? num(g[k]) : '—'}</td>`)}
                  <td class="bars">${bar(g, cls, 'median_ttft_ms')}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${
        p.enabled
          ? html`<p class="muted">
              Holds ${p.blocks} of ${p.capacity_blocks} blocks (${mib(p.bytes)} of a ${mib(p.pool_bytes)} pool); ${p.inserted} cached, ${p.evictions} evicted,
              ${p.refused} not cached (every block in use). Copies: ${p.blocks_copied_in} blocks in on hits, ${p.blocks_copied_out} out, ${mib(p.copy_bytes)}
              moved on the device.
            </p>`
          : ''
      }`;
  }
}
