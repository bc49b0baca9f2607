/** Plain-text tables for the CLI (pure functions of a result). */
import type { BenchResult, CeilingKey, Ceilings } from './schema.ts';

const CEILING_LABELS: Record<CeilingKey, string> = {
  read_bandwidth_gbps: 'streaming read',
  copy_bandwidth_gbps: 'read+write copy kernel',
  copy_buffer_to_buffer_gbps: 'copyBufferToBuffer',
  f32_gflops: 'f32 FMA',
  f16_gflops: 'f16 FMA',
  matmul_f32_gflops: 'tiled f32 matmul',
};

function fmt(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** A fixed-width table: columns padded to their widest cell. */
export function table(header: string[], rows: string[][], rightAlign: boolean[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatCeilings(c: Ceilings): string {
  const rows = (Object.keys(CEILING_LABELS) as CeilingKey[]).map((key) => {
    const m = c.measurements[key];
    if (!m) return [CEILING_LABELS[key], 'n/a', '', '', '', 'not supported on this device'];
    return [CEILING_LABELS[key], `${fmt(m.value)} ${m.unit}`, `${fmt(m.min)}–${fmt(m.max)}`, String(m.samples.length), m.clock, m.shape];
  });
  const ratio = (k: CeilingKey) => (c[k] !== null ? (c[k]! / c.copy_buffer_to_buffer_gbps).toFixed(2) : 'n/a');
  return [
    table(['roof', 'median', 'min–max', 'n', 'clock', 'shape'], rows, [false, true, true, true]),
    '',
    `Working set ${(c.working_set_bytes / 2 ** 20).toFixed(0)} MiB; GB/s = 1e9 bytes/s counting bytes read + written.`,
    `Against copyBufferToBuffer: streaming read ×${ratio('read_bandwidth_gbps')}, copy kernel ×${ratio('copy_bandwidth_gbps')}.`,
    `Ridge point (matmul roof / read roof): ${(c.matmul_f32_gflops / c.read_bandwidth_gbps).toFixed(2)} FLOP/byte.`,
  ].join('\n');
}

export function formatEnvironment(r: BenchResult): string {
  const e = r.environment;
  const a = e.adapter;
  const name = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ') || 'unknown adapter';
  return [
    `Adapter: ${name}${a.isFallbackAdapter ? ' (fallback adapter)' : ''}${e.cpu_adapter ? ' — a CPU implementation: numbers describe this CPU, not a GPU' : ''}`,
    `Runtime: ${e.runtime} — ${e.user_agent}`,
    `Features: ${e.features.join(', ') || 'none'}${e.disabled_features.length ? ` (disabled: ${e.disabled_features.join(', ')})` : ''}`,
  ].join('\n');
}
