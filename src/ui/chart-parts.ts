/** Pieces of Chart.js configuration the charts share (axes, line and point datasets). */
import type { Theme } from './chart-base.ts';

export function axis(theme: Theme, title: string, type: 'linear' | 'logarithmic' = 'linear', fromZero = false) {
  return {
    type,
    beginAtZero: fromZero,
    title: { display: true, text: title, color: theme.fg },
    ticks: { color: theme.fg, maxTicksLimit: 8 },
    grid: { color: theme.grid },
  };
}

export function lineDataset(label: string, data: { x: number; y: number }[], color: string, dash: number[] = []) {
  return { label, data, borderColor: color, backgroundColor: color, showLine: true, pointRadius: 3, borderWidth: 2, borderDash: dash };
}

export function pointDataset(label: string, data: { x: number; y: number }[], color: string, radius = 2.5) {
  return { label, data, borderColor: color, backgroundColor: color, showLine: false, pointRadius: radius };
}
