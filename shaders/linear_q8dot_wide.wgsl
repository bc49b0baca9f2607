enable subgroups;
diagnostic(off, subgroup_uniformity);

// linear_q8dot.wgsl for GPUs, shaped as matvec_wide.wgsl: a workgroup of LANES invocations stages
// X (all of them quantizing blocks), then holds several subgroups, each owning ROW_BLOCK rows at a
// time; a subgroup's lanes take consecutive blocks of the rows and one subgroupAdd per row and
// token finishes each sum. Row blocks are dealt out from the subgroup size the shader runs at (the
// `subgroup_size` builtin), assuming, as every backend lays out a 1-D workgroup, that a subgroup is
// a contiguous run of local_invocation_index. The subgroup_uniformity diagnostic is off because a
// row block's loop bound is uniform within each subgroup, though not across the workgroup.

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(subgroup_size) sg_size: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  stage_x(lane, LANES, 0u);
  workgroupBarrier();
  let first = (wid.x + wid.y * nwg.x) * ROWS_PER_WG;
  let width = min(sg_size, LANES);   // invocations of this workgroup per subgroup
  let subgroups = LANES / width;
  let sg = lane / width;
  let sg_lane = lane % width;
  for (var r = sg * ROW_BLOCK; r < ROWS_PER_WG; r += subgroups * ROW_BLOCK) {
    let row0 = first + r;
    if (row0 >= params.rows) { break; }
    let acc = q8_partials(row0, sg_lane, width);
    var scale: array<f32, MAX_TOKENS>;
    for (var t = 0u; t < TOKENS; t++) {
      var sum_sq = 0.0;
      if (NORM_INPUT) { sum_sq = subgroupAdd(acc[ROW_BLOCK * TOKENS + t]); }
      scale[t] = input_scale(sum_sq);
    }
    // GATED pairs (2j, 2j+1) stay within one row block: linear.ts keeps ROW_BLOCK even for them.
    for (var i = 0u; i < ROW_BLOCK; i++) {
      for (var t = 0u; t < TOKENS; t++) {
        let sum = subgroupAdd(acc[i * TOKENS + t]);
        if (sg_lane == 0u && row0 + i < params.rows) { store(t, row0 + i, sum * scale[t]); }
      }
    }
  }
}
