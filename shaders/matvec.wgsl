// Matvec, workgroup-memory reduction (no optional features): a tree over LANES with
// log2(LANES) barriers per ROW_BLOCK rows. Joined with matvec_core.wgsl,
// linear_io.wgsl and a weights_*.wgsl.

override SUMS: u32 = (ROW_BLOCK + select(0u, 1u, NORM_INPUT)) * TOKENS;   // products, then Σx² per token
var<workgroup> partials: array<f32, SUMS * LANES>;   // (SUMS, LANES)

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = workgroup_row0(wid, nwg);
  let outs = ROW_BLOCK * TOKENS;
  for (var r = 0u; r < ROWS_PER_WG; r += ROW_BLOCK) {
    let row0 = first + r;
    if (row0 >= params.rows) { break; }
    let acc = partial_dots(row0, lane, LANES);
    for (var j = 0u; j < SUMS; j++) { partials[j * LANES + lane] = acc[j]; }
    for (var s = LANES / 2u; s > 0u; s >>= 1u) {
      workgroupBarrier();
      if (lane < s) {
        for (var j = 0u; j < SUMS; j++) { partials[j * LANES + lane] += partials[j * LANES + lane + s]; }
      }
    }
    workgroupBarrier();
    // Output e = (row i = e % ROW_BLOCK, token t = e / ROW_BLOCK); each lane stores outputs 2p and
    // 2p+1, so a GATED pair (rows 2j, 2j+1 of a token) is stored by one invocation in order.
    for (var p = lane; 2u * p < outs; p += LANES) {
      for (var e = 2u * p; e < min(2u * p + 2u, outs); e++) {
        let i = e % ROW_BLOCK;
        let t = e / ROW_BLOCK;
        var sum_sq = 0.0;
        if (NORM_INPUT) { sum_sq = partials[(outs + t) * LANES]; }
        if (row0 + i < params.rows) { store(t, row0 + i, partials[(i * TOKENS + t) * LANES] * input_scale(sum_sq)); }
      }
    }
    workgroupBarrier();   // partials are rewritten by the next block
  }
}
