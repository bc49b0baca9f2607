/** Chart colours (Chart.js itself loads lazily: chart-lib.ts). */
/** Colours that read on both light and dark backgrounds. */
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7'];

export function themeColors(el: Element): { fg: string; grid: string } {
  const style = getComputedStyle(el);
  return { fg: style.getPropertyValue('--fg').trim() || '#222', grid: style.getPropertyValue('--border').trim() || '#ccc' };
}
