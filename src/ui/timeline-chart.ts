import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import type { ServeRun } from '../serve/run.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';

type Request = ServeRun['timeline'][number];

/** Requests drawn at most (the first ones by id); more would be unreadable bars. */
export const TIMELINE_MAX = 64;

/** The three phases of a request as [start, end] ms, null where it never got there. */
function phases(r: Request): { queue: [number, number] | null; prefill: [number, number] | null; decode: [number, number] | null } {
  const admit = r.admit_ms ?? r.finish_ms;
  return {
    queue: [r.arrival_ms, admit],
    prefill: r.admit_ms !== null ? [r.admit_ms, r.first_token_ms ?? r.finish_ms] : null,
    decode: r.first_token_ms !== null ? [r.first_token_ms, r.finish_ms] : null,
  };
}

/**
 * One horizontal bar per request along the run's clock: waiting in the queue (arrival → admitted to
 * the batch), prefill (admitted → first token) and decode (first token → finished). A failed
 * request is drawn red from arrival to the error.
 */
@customElement('ts-timeline-chart')
export class TimelineChart extends ChartBase {
  @property({ attribute: false }) timeline: Request[] | null = null;
  protected readonly chartName = 'per-request timeline';

  private shown(): Request[] {
    return [...(this.timeline ?? [])].sort((a, b) => a.id - b.id).slice(0, TIMELINE_MAX);
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    this.emptyText = 'Waiting for the serving run…';
    const rs = this.shown();
    if (rs.length === 0) {
      if (this.timeline) this.emptyText = 'This report carries no per-request timeline (it was left out of the link to keep it short); the JSON export has it.';
      return null;
    }
    const ok = rs.map((r) => (r.error === null ? phases(r) : null));
    const bar = (label: string, color: string, data: ([number, number] | null)[]) => ({
      label,
      data,
      backgroundColor: color,
      borderColor: color,
      grouped: false,
      barPercentage: 0.9,
      categoryPercentage: 0.9,
    });
    return {
      type: 'bar',
      data: {
        labels: rs.map((r) => `#${r.id}${r.error !== null ? ' ✕ failed' : ''}`),
        datasets: [
          bar(
            'queued (arrival → admitted)',
            PALETTE[5],
            ok.map((p) => p?.queue ?? null),
          ),
          bar(
            'prefill (admitted → first token)',
            PALETTE[0],
            ok.map((p) => p?.prefill ?? null),
          ),
          bar(
            'decode (first token → last)',
            PALETTE[4],
            ok.map((p) => p?.decode ?? null),
          ),
          bar(
            'failed (arrival → error)',
            PALETTE[2],
            rs.map((r) => (r.error !== null ? [r.arrival_ms, r.finish_ms] : null)),
          ),
        ] as never,
      },
      options: {
        indexAxis: 'y',
        scales: {
          x: axis(theme, 'time since the run started (ms)', 'linear', true),
          y: { ticks: { color: theme.fg, autoSkip: true }, grid: { display: false } },
        },
        plugins: {
          legend: { labels: { color: theme.fg, boxWidth: 14 } },
          tooltip: {
            callbacks: {
              label: (item) => {
                const [a, b] = item.raw as [number, number];
                return `${item.dataset.label}: ${num(a)} → ${num(b)} ms (${num(b - a)} ms)`;
              },
            },
          },
        },
      },
    };
  }

  protected describe(): string {
    const rs = this.shown();
    if (rs.length === 0) return 'Per-request timeline: no requests.';
    const failed = rs.filter((r) => r.error !== null).length;
    const mean = (f: (p: ReturnType<typeof phases>) => [number, number] | null) => {
      const spans = rs
        .filter((r) => r.error === null)
        .map((r) => f(phases(r)))
        .filter((x): x is [number, number] => x !== null);
      return spans.length ? num(spans.reduce((s, [a, b]) => s + b - a, 0) / spans.length) : '—';
    };
    const more = (this.timeline?.length ?? 0) > rs.length ? ` (the first ${rs.length} of ${this.timeline!.length} shown)` : '';
    return `Per-request timeline of ${rs.length} requests${more}: on average ${mean((p) => p.queue)} ms queued, ${mean((p) => p.prefill)} ms in prefill, ${mean((p) => p.decode)} ms decoding; ${failed} failed.`;
  }
}
