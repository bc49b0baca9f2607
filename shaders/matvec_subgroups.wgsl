enable subgroups;

// Matvec, subgroup reduction: the workgroup is one subgroup (LANES ≤ the device's minimum
// subgroup size, chosen in src/kernels/select.ts), so subgroupAdd sums a row with no barrier.
// Same binding contract as matvec.wgsl; joined with matvec_core.wgsl, linear_io.wgsl
// and a weights_*.wgsl.

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = workgroup_row0(wid, nwg);
  for (var r = 0u; r < ROWS_PER_WG; r += ROW_BLOCK) {
    let row0 = first + r;
    if (row0 >= params.rows) { break; }
    let acc = partial_dots(row0, lane, LANES);
    var scale: array<f32, MAX_TOKENS>;
    for (var t = 0u; t < TOKENS; t++) {
      var sum_sq = 0.0;
      if (NORM_INPUT) { sum_sq = subgroupAdd(acc[ROW_BLOCK * TOKENS + t]); }
      scale[t] = input_scale(sum_sq);
    }
    for (var i = 0u; i < ROW_BLOCK; i++) {
      for (var t = 0u; t < TOKENS; t++) {
        let sum = subgroupAdd(acc[i * TOKENS + t]);
        if (lane == 0u && row0 + i < params.rows) { store(t, row0 + i, sum * scale[t]); }
      }
    }
  }
}
