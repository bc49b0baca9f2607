/**
 * The row table: one descriptor per row (token) of a step, read by the kernels on the GPU.
 *
 * `rows: array<vec2<u32>>`, entry r = (slot, pos): the KV-cache slot (sequence) row r belongs to and
 * its position in that sequence. The same table describes a prefill (R rows of one slot at
 * start..start+R−1, possibly a chunk continuing an earlier prefill), a single decode (R = 1), a
 * batched decode (R rows of different slots and positions) and a mixed step. Dispatches are built
 * once per R; the engine rewrites the table every step, so nothing that varies per step is baked in.
 */

export interface RowDesc {
  /** KV-cache slot (sequence), < slots. */
  slot: number;
  /** Position in the sequence, < maxSeq. */
  pos: number;
}

/** Bytes of one row descriptor. */
export const ROW_BYTES = 8;

/** A row table for up to `R` rows (storage, copy-dst). */
export function rowTableBuffer(device: GPUDevice, label: string, R: number): GPUBuffer {
  return device.createBuffer({ label, size: Math.max(R, 1) * ROW_BYTES, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
}

/** The table's bytes: (slot, pos) per row. */
export function rowTableData(rows: readonly RowDesc[]): Uint32Array<ArrayBuffer> {
  const data = new Uint32Array(rows.length * 2);
  rows.forEach((row, r) => {
    data[2 * r] = row.slot;
    data[2 * r + 1] = row.pos;
  });
  return data;
}

/** Write a step's rows into its table. */
export function writeRowTable(queue: GPUQueue, table: GPUBuffer, rows: readonly RowDesc[]): void {
  queue.writeBuffer(table, 0, rowTableData(rows));
}

/** Rows of a prefill (chunk) of `count` tokens of one slot starting at `start`. */
export function prefillRows(slot: number, start: number, count: number): RowDesc[] {
  return Array.from({ length: count }, (_, i) => ({ slot, pos: start + i }));
}
