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

/**
 * Record out[t] = table[tokens[t]] · scale for t < R: tokens u32 (R), out f32 (R, table.cols).
 * `scale` is 1 for most models (Gemma: √dim). One dispatch per shard of the table; the whole
 * lookup's cost is carried by the first.
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
  const spec = embeddingSpec(table.format, embeddingWorkgroupSize(ctx.caps));
  const last = table.shards.length - 1;
  return Promise.all(
    table.shards.map((shard, i) => {
      const name = table.shards.length > 1 ? `${owner}.shard${i}` : owner;
      const layout = packedLayout(table.format, shard.rows, table.cols);
      const params = paramsBuffer(ctx.device, `${name}.params`, spec.name, {
        rows: shard.rows,
        cols: table.cols,
        row_start: shard.rowStart,
        vocab: table.rows,
        tokens: R,
        zero_out_of_range: i === last ? 1 : 0,
        scale_base: layout.scaleBase,
        scale,
      });
      const bindings: Binding[] = [tokens, out, params, shard.buffer];
      if (hasScaleRegion(table.format)) bindings.push(shard.buffer);
      return makeDispatch(ctx, spec, {
        owner: name,
        kind: 'embedding',
        bindings,
        workgroups: grid1d(R, ctx.caps.limits.maxComputeWorkgroupsPerDimension),
        owned: [params],
      });
    }),
  );
}
