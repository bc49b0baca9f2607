import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration, TooltipItem } from 'chart.js';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import type { Cohorts, Group } from './cohorts.ts';
import { num } from './format.ts';

const MAX_LABEL_CHARS = 22;
const clip = (text: string) => (text.length > MAX_LABEL_CHARS ? `${text.slice(0, MAX_LABEL_CHARS - 1)}…` : text);

/** A group's name in full: device, then model, format and runtime. */
export const groupLabel = (g: Group): string[] => [g.device, `${g.model} ${g.format} · ${g.runtime}`];

/** A group's name on the axis, two short lines (the tooltip and the table give it in full). */
const axisLabel = (g: Group): string[] => [clip(g.device), clip(`${g.format} · ${g.runtime}`)];

/**
 * Decode tokens/s per group: a bar from the group's spread's low end to its high end (p10–p90 or
 * min–max), the median as a dot, and "your run" as a triangle in its group.
 */
@customElement('ts-cohort-chart')
export class CohortChart extends ChartBase {
  @property({ attribute: false }) cohorts: Cohorts | null = null;
  protected readonly chartName = 'decode tokens per second by group';
  protected override emptyText = 'Open results with a latency sweep to compare their decode speed.';

  private groups(): Group[] {
    return (this.cohorts?.groups ?? []).filter((g) => g.decode_spread !== null);
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const groups = this.groups();
    if (!groups.length) return null;
    const mine = this.cohorts?.mine;
    const spreadText = (g: Group) => `${num(g.decode_spread!.lo)}–${num(g.decode_spread!.hi)} tok/s (${g.decode_spread!.kind} of ${g.n} runs)`;
    const title = (items: TooltipItem<'bar' | 'line'>[]) => (items[0] ? groupLabel(groups[items[0].dataIndex]) : []);
    const tooltip = (item: TooltipItem<'bar' | 'line'>) => {
      const g = groups[item.dataIndex];
      if (item.datasetIndex === 0) return `spread ${spreadText(g)}`;
      if (item.datasetIndex === 1) return `median ${num(g.decode_tokens_per_s)} tok/s`;
      return `your run ${num(mine?.run.decode_tokens_per_s)} tok/s`;
    };
    const datasets: object[] = [
      {
        type: 'bar',
        label: 'spread (p10–p90 if n ≥ 5, else min–max)',
        data: groups.map((g) => [g.decode_spread!.lo, g.decode_spread!.hi]),
        backgroundColor: `${PALETTE[0]}66`,
        borderColor: PALETTE[0],
        borderWidth: 1,
        minBarLength: 3,
      },
      {
        type: 'line',
        label: 'median',
        data: groups.map((g) => g.decode_tokens_per_s),
        showLine: false,
        pointRadius: 5,
        borderColor: PALETTE[1],
        backgroundColor: PALETTE[1],
      },
    ];
    if (mine) {
      datasets.push({
        type: 'line',
        label: 'your run',
        data: groups.map((g) => (g === mine.group ? mine.run.decode_tokens_per_s : null)),
        showLine: false,
        pointRadius: 8,
        pointStyle: 'triangle',
        borderColor: PALETTE[2],
        backgroundColor: PALETTE[2],
      });
    }
    return {
      type: 'bar',
      data: { labels: groups.map(axisLabel), datasets: datasets as never },
      options: {
        indexAxis: 'y',
        maintainAspectRatio: false,
        scales: {
          x: axis(theme, 'decode tokens/s', 'linear', true),
          y: { type: 'category', ticks: { color: theme.fg, autoSkip: false, font: { size: 11 } }, grid: { color: theme.grid } },
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } }, tooltip: { callbacks: { title, label: tooltip } } },
      },
    } as ChartConfiguration;
  }

  protected describe(): string {
    const groups = this.groups();
    if (!groups.length) return 'Decode tokens/s by group: no result with a latency sweep.';
    return `Decode tokens/s by group, median and spread: ${groups
      .map(
        (g) =>
          `${groupLabel(g).join(', ')}: ${num(g.decode_tokens_per_s)} (${num(g.decode_spread!.lo)}–${num(g.decode_spread!.hi)}, ${g.decode_spread!.kind}, n ${g.n})`,
      )
      .join('; ')}.`;
  }
}
