/**
 * Results for the many-results tests, made by varying a real result's fields: the adapter, and
 * every latency row's decode speed (TPOT, % of the read roof and TTFT scaled with it), so each
 * variant stays schema-valid.
 */
import type { BenchResult } from '../../../src/measure/schema.ts';

export interface Variant {
  device: string;
  /** Decode tok/s of the shortest prompt's row; the other rows keep their ratio to it. */
  decode: number;
  runtime?: 'browser' | 'node';
  quant?: string;
  created_at?: string;
}

export function variant(base: BenchResult, v: Variant): BenchResult {
  const r = structuredClone(base);
  r.environment.adapter = { ...r.environment.adapter, description: v.device, vendor: v.device.split(' ')[0].toLowerCase() };
  if (v.runtime) r.environment.runtime = v.runtime;
  if (v.quant && r.model) r.model = { ...r.model, quantization: v.quant };
  if (v.created_at) r.created_at = v.created_at;
  const rows = r.latency?.rows ?? [];
  const first = [...rows].sort((a, b) => a.prompt_tokens - b.prompt_tokens).find((row) => row.decode_tokens_per_s !== null);
  const scale = first?.decode_tokens_per_s ? v.decode / first.decode_tokens_per_s : 1;
  for (const row of rows) {
    if (row.decode_tokens_per_s !== null) row.decode_tokens_per_s *= scale;
    if (row.tpot) row.tpot = { ...row.tpot, p50: row.tpot.p50 / scale, min: row.tpot.min / scale, max: row.tpot.max / scale, mean: row.tpot.mean / scale };
    if (row.decode_efficiency !== null && row.decode_efficiency !== undefined) row.decode_efficiency = Math.min(1, row.decode_efficiency * scale);
    row.ttft = { ...row.ttft, p50: row.ttft.p50 / scale };
  }
  return r;
}
