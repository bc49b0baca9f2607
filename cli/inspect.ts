/**
 * `npm run bench -- --inspect URL|PATH|ID`: read only a GGUF's header (Range requests for a URL)
 * and print what the page's inspection shows before a download — architecture, parameters, each
 * tensor type's share of the bytes, the memory plan against this device's limits (or "cannot run: …"
 * with the message a run would give; the CLI then exits 1), and the decode tokens/s the read roof
 * allows (measured first with --probe; otherwise "no roof measured yet").
 */
import { findKnownFile } from '../src/model/catalog.ts';
import { table } from '../src/measure/format.ts';
import type { GpuContext } from '../src/gpu/device.ts';
import type { ByteSource } from '../src/model/gguf/source.ts';
import { bytes } from '../src/ui/format.ts';
import { urlSource } from '../src/model/gguf/url-source.ts';
import { kvElement, type KvElement } from '../src/kernels/select.ts';
import { countingSource, inspectSource, type DeviceLimits, type ModelInspection } from '../src/measure/inspect.ts';
import { describeError } from '../src/errors.ts';

export interface InspectRun {
  inspection: ModelInspection;
  /** Bytes the inspection asked the source for (a URL: what the server sent). */
  bytesRead: number;
  reads: number;
  /** Why the device limits are unknown, when they are. */
  deviceNote: string | null;
}

export interface InspectCliOptions {
  /** Measure the read roof first (the device's roofs job, bandwidth only matters here). */
  probe: boolean;
  probeMiB?: number;
  budgetBytes?: number;
  context?: number;
  onProgress?: (step: string, fraction: number) => void;
}

async function openTarget(target: string): Promise<ByteSource> {
  const url = findKnownFile(target)?.url ?? target;
  if (/^https?:\/\//.test(url)) return urlSource(url, { rangesOnly: true });
  const { fileSource } = await import('../src/model/gguf/node-source.ts');
  return fileSource(url);
}

export async function inspectTarget(target: string, opts: InspectCliOptions): Promise<InspectRun> {
  const raw = await openTarget(target);
  const { source, stats } = countingSource(raw);
  let limits: DeviceLimits | null = null;
  let kv: KvElement | undefined;
  let readRoofGBs: number | null = null;
  let deviceNote: string | null = null;
  let ctx: GpuContext | null = null;
  try {
    const { acquireNodeGpu } = await import('../src/gpu/node-gpu.ts');
    ctx = await acquireNodeGpu();
    limits = ctx.caps.limits;
    kv = kvElement(ctx.caps);
    if (opts.probe) {
      const { runJob } = await import('../src/jobs/job.ts');
      const result = await runJob(ctx, { probe: true, probeMiB: opts.probeMiB }, new Set(), { onProgress: opts.onProgress });
      readRoofGBs = result.ceilings?.read_bandwidth_gbps ?? null;
    }
  } catch (e) {
    deviceNote = `no WebGPU device here (${describeError(e)}): nothing is checked against device limits`;
  } finally {
    ctx?.destroy();
  }
  try {
    const inspection = await inspectSource(source, { limits, kvElement: kv, readRoofGBs, budgetBytes: opts.budgetBytes, context: opts.context });
    return { inspection, bytesRead: stats.bytes, reads: stats.reads, deviceNote };
  } finally {
    await (raw as { close?: () => Promise<void> }).close?.();
  }
}

const mib = bytes;
const millions = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : `${(n / 1e6).toFixed(1)} M`);

export function formatInspection(run: InspectRun): string {
  const i = run.inspection;
  const lines: string[] = [];
  lines.push(`${i.name ?? i.source} — ${i.architecture}, GGUF v${i.ggufVersion}`);
  lines.push(
    `file: ${mib(i.fileBytes)}; header ${mib(i.headerBytes)}; read ${mib(run.bytesRead)} in ${run.reads} reads ` +
      `(${((100 * run.bytesRead) / Math.max(1, i.fileBytes)).toFixed(2)}% of the file)`,
  );
  lines.push(`parameters: ${millions(i.parameters)} (every tensor's elements)`);
  lines.push('');
  lines.push(
    table(
      ['tensor type', 'tensors', 'bytes', 'share'],
      i.types.map((t) => [t.type, String(t.tensors), mib(t.bytes), `${(100 * t.share).toFixed(1)}%`]),
      [false, true, true, true],
    ),
  );
  lines.push('');
  if (i.unsupported) lines.push(`cannot run: ${i.unsupported}`);
  else if (i.memory) {
    const p = i.memory.plan;
    lines.push(
      `memory for a ${i.memory.context}-token context: ${mib(p.totalBytes)} (weights ${mib(p.weightBytes)}, ` +
        `KV cache ${mib(p.kvCacheBytes)} of ${p.kvElement}, activations ${mib(p.activationBytes)}, vectors ${mib(p.vectorBytes)})`,
    );
    lines.push(i.memory.problem ? `does not fit: ${i.memory.problem}` : i.memory.checked ? "fits this device's limits" : 'not checked against a device');
  }
  if (run.deviceNote) lines.push(run.deviceNote);
  const d = i.decode;
  lines.push(
    d === null
      ? 'decode: not predicted (the engine cannot plan this model)'
      : d.tokensPerS === null
        ? `decode: ${mib(d.bytesPerToken)} read per token; no roof measured yet (add --probe to measure the read roof)`
        : `decode: at most ${d.tokensPerS.toFixed(1)} tokens/s = read roof ${d.readRoofGBs!.toFixed(2)} GB/s ÷ ${mib(d.bytesPerToken)} per token`,
  );
  return lines.join('\n');
}
