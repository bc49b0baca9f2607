enable subgroups;
diagnostic(off, subgroup_uniformity);

// Matvec for GPUs: a workgroup of LANES invocations holds several subgroups, and each subgroup
// owns ROW_BLOCK rows at a time (ggml's Metal matvec: 2 simdgroups × 4 rows). Within a subgroup,
// consecutive lanes load consecutive chunks of the rows (coalesced 16-byte loads), each X chunk a
// lane loads feeds all ROW_BLOCK rows (matvec_core.wgsl's partial_dots), and one subgroupAdd per
// row and token finishes the sum: no workgroup memory, no barrier. Row blocks are dealt out from
// the subgroup size the shader actually runs at (the `subgroup_size` builtin), not the one the
// adapter reports, so a driver that runs narrower (or wider) waves still covers every row once.
// This assumes, as every backend lays them out for a 1-D workgroup, that a subgroup is a
// contiguous run of local_invocation_index. The subgroup_uniformity diagnostic is off because a
// row block's loop bound is uniform within each subgroup, though not across the workgroup.
// Workgroup z takes TOKENS rows of X from token0 = z · TOKENS: a prompt longer than 8 tokens runs
// as groups of 8 (GPUs, up to GROUPED_MAX_TOKENS in select.ts), each weight read once per group.
// Same binding contract as matvec.wgsl; joined with matvec_core.wgsl, linear_io.wgsl and a
// weights_*.wgsl — or, for 8-bit activations, with linear_q8dot.wgsl and its format part, which
// supply partial_dots and a stage_x that quantizes X into workgroup memory first.

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(subgroup_size) sg_size: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  token0 = wid.z * TOKENS;
  stage_x(lane);
  let first = workgroup_row0(wid, nwg);
  let width = min(sg_size, LANES);   // invocations of this workgroup per subgroup
  let subgroups = LANES / width;
  let sg = lane / width;
  let sg_lane = lane % width;
  for (var r = sg * ROW_BLOCK; r < ROWS_PER_WG; r += subgroups * ROW_BLOCK) {
    let row0 = first + r;
    if (row0 >= params.rows) { break; }
    let acc = partial_dots(row0, sg_lane, width);
    var scale: array<f32, MAX_TOKENS>;
    for (var t = 0u; t < TOKENS; t++) {
      var sum_sq = 0.0;
      if (NORM_INPUT) { sum_sq = subgroupAdd(acc[ROW_BLOCK * TOKENS + t]); }
      scale[t] = input_scale(sum_sq);
    }
    // GATED pairs (2j, 2j+1) stay within one row block: select.ts keeps ROW_BLOCK even for them.
    for (var i = 0u; i < ROW_BLOCK; i++) {
      for (var t = 0u; t < TOKENS; t++) {
        let sum = subgroupAdd(acc[i * TOKENS + t]);
        if (sg_lane == 0u && row0 + i < params.rows && token0 + t < params.tokens) { store(token0 + t, row0 + i, sum * scale[t]); }
      }
    }
  }
}
