/**
 * Number formatting shared by the page's tables and charts (text only). Each figure is first
 * settled to the nine significant digits a link carries (share/codec.ts linkPrecision), then
 * rounded for show: a live report and its link print the same digits, and a figure that is
 * exactly a tie (300 W × 0.4092 s / 24 tokens = 5.115 J) rounds one way, not by float residue.
 */
import { linkPrecision } from '../share/codec.ts';

/** x.toFixed(digits) of x settled to a link's precision. */
export function fixed(x: number, digits: number): string {
  return linkPrecision(x).toFixed(digits);
}

/** x.toPrecision(digits) of x settled to a link's precision. */
export function precision(x: number, digits: number): string {
  return linkPrecision(x).toPrecision(digits);
}

/** Three significant figures or so: 1234 → "1234", 12.34 → "12.3", 1.234 → "1.23", 0.01234 → "0.0123". */
export function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  if (a >= 100) return fixed(x, 0);
  if (a >= 10) return fixed(x, 1);
  if (a >= 1 || a === 0) return fixed(x, 2);
  return precision(x, 3);
}

export function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '—' : `${fixed(100 * x, 1)}%`;
}

export function bytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

/** 1.24e9 → "1.24 B", 292800 → "293 K". */
export function count(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} K`;
  return String(n);
}

/** A ratio as "×1.23". */
export function ratio(x: number | null): string {
  return x === null || !Number.isFinite(x) ? '—' : `×${fixed(x, x >= 100 ? 0 : x >= 10 ? 1 : 2)}`;
}
