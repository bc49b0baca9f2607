/**
 * Workgroup-grid helpers shared by kernels that use a grid-stride loop: the shader computes
 * `linear = gid.x + gid.y * nwg.x * WG_SIZE`, so a grid can exceed 65,535 workgroups in x.
 */

/** A 2-D grid of exactly `workgroups` workgroups when possible (x ≤ maxPerDim). */
export function grid1d(workgroups: number, maxPerDim = 65535): [number, number, number] {
  if (workgroups <= maxPerDim) return [Math.max(1, workgroups), 1, 1];
  const y = Math.ceil(workgroups / maxPerDim);
  return [Math.ceil(workgroups / y), y, 1];
}

/** Total invocations of a grid (the grid-stride). */
export function gridInvocations(grid: readonly [number, number, number], wgSize: number): number {
  return grid[0] * grid[1] * grid[2] * wgSize;
}

/** Words per workgroup when `words` are split into contiguous chunks over `workgroups`, a multiple of wgSize. */
export function chunkWords(words: number, workgroups: number, wgSize: number): number {
  return Math.ceil(words / workgroups / wgSize) * wgSize;
}
