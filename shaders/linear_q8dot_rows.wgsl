// linear_q8dot.wgsl without subgroups, shaped as linear_rows.wgsl (the CPU adapters' shape): one
// invocation per ROW_BLOCK weight rows over all columns, no reduction; workgroup z takes TOKENS
// rows of X, which the workgroup stages once for its LANES · ROW_BLOCK rows. Each invocation's
// ROW_BLOCK × TOKENS register tile loads a weight block once for TOKENS tokens and a staged X
// block once for ROW_BLOCK rows: decode (R ≤ 8) and, on CPU adapters, prefill (select.ts).

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let t0 = wid.z * TOKENS;
  stage_rows(lane, LANES, t0);
  workgroupBarrier();
  let row0 = ((wid.x + wid.y * nwg.x) * LANES + lane) * ROW_BLOCK;
  let acc = partial_dots(row0, 0u, 1u);
  // GATED pairs (2j, 2j+1) are rows of one invocation (ROW_BLOCK even): gate first for every token, then up.
  for (var i = 0u; i < ROW_BLOCK; i++) {
    if (row0 + i >= params.rows) { break; }
    for (var t = 0u; t < TOKENS; t++) {
      if (t0 + t < params.tokens) { store(t0 + t, row0 + i, acc[i * TOKENS + t] * input_scale(acc[ROW_BLOCK * TOKENS + t])); }
    }
  }
}
