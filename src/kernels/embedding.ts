/**
 * Embedding lookup with dequantization, for every weight format (the variant embedding+<format>
 * of variant-table.ts: shaders/embedding.wgsl joined with the format's weights_<format>.wgsl).
 * Token ids ≥ the table's rows read nothing and yield a zero row.
 */
import type { GpuContext } from '../gpu/device.ts';
import type { KernelSpec } from './shaders.ts';
import { grid1d } from './grid.ts';
import { makeDispatch, type Binding, type Cost, type Dispatch } from './kernel.ts';
import { embeddingWorkgroupSize } from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';
import { hasScaleRegion, packedLayout, weightBytes, type WeightFormat, type WeightTensor } from './weights.ts';

/** R table rows read (quants + scales), R ids read, R rows of f32 written. */
export function embeddingCost(format: WeightFormat, cols: number, R: number): Cost {
  return { flops: 0, bytes: weightBytes(format, R, cols) + 4 * R + 4 * R * cols };
}

/** The gather's pipeline for a table in `format`: the kernel joined with the format's weight library. */
export function embeddingSpec(format: WeightFormat, wgSize: number): KernelSpec & { name: `embedding+${WeightFormat}` } {
  return { ...shader(`embedding+${format}`), constants: { WG_SIZE: wgSize } };
}

/** The gather over two shards at once (shaders/embedding_pair.wgsl: the library twice, the second renamed). */
export function embeddingPairSpec(format: WeightFormat, wgSize: number): KernelSpec & { name: `embedding_pair+${WeightFormat}` } {
  return { ...shader(`embedding_pair+${format}`), constants: { WG_SIZE: wgSize } };
}

/**
 * Record out[t] = table[tokens[t]] · scale for t < R: tokens u32 (R), out f32 (R, table.cols).
 * `scale` is 1 for most models (Gemma: √dim). One dispatch per two shards of the table (a table
 * over the device's binding limit: Llama-3.2-1B's 148 MB on lavapipe's 128 MiB), the last one
 * alone where their count is odd; the whole lookup's cost is carried by the first.
 */
export async function embedding(
  ctx: GpuContext,
  owner: string,
  table: WeightTensor,
  tokens: GPUBuffer,
  out: GPUBuffer,
  R: number,
  scale = 1,
): Promise<Dispatch[]> {
  if (!(Number.isInteger(R) && R >= 1)) throw new RangeError(`${owner}: R must be a positive integer, got ${R}`);
  if (tokens.size < R * 4 || out.size < R * table.cols * 4) throw new RangeError(`${owner}: buffers too small for ${R} tokens of ${table.cols}`);
  const wgSize = embeddingWorkgroupSize(ctx.caps);
  const scales = hasScaleRegion(table.format);
  const { shards } = table;
  const groups = Array.from({ length: Math.ceil(shards.length / 2) }, (_, g) => shards.slice(2 * g, 2 * g + 2));
  const workgroups = grid1d(R, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
  return Promise.all(
    groups.map((group, g) => {
      const name = shards.length > 1 ? `${owner}.shard${2 * g}${group.length > 1 ? `-${2 * g + 1}` : ''}` : owner;
      const last = g === groups.length - 1 ? 1 : 0;
      const base = (shard: (typeof shards)[number]) => packedLayout(table.format, shard.rows, table.cols).scaleBase;
      const weightBindings = (shard: (typeof shards)[number]): Binding[] => (scales ? [shard.buffer, shard.buffer] : [shard.buffer]);
      const [a, b] = group;
      const spec = b ? embeddingPairSpec(table.format, wgSize) : embeddingSpec(table.format, wgSize);
      const params = paramsBuffer(ctx.device, `${name}.params`, spec.name, {
        rows: a.rows,
        cols: table.cols,
        row_start: a.rowStart,
        vocab: table.rows,
        tokens: R,
        zero_out_of_range: last,
        scale_base: base(a),
        scale,
        // The pair's second shard (embedding_pair.wgsl's renamed library): its rows follow a's.
        ...(b ? { rows_1: b.rows, scale_base_1: base(b) } : {}),
      });
      return makeDispatch(ctx, spec, {
        owner: name,
        kind: 'embedding',
        bindings: [tokens, out, params, ...group.flatMap(weightBindings)],
        workgroups,
        owned: [params],
      });
    }),
  );
}
