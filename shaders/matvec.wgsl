// Matvec, workgroup-memory reduction (no optional features): a tree over LANES with
// log2(LANES) barriers per ROW_BLOCK rows. Joined with matvec_core.wgsl,
// linear_io.wgsl and a weights_*.wgsl.

var<workgroup> partials: array<f32, ROW_BLOCK * TOKENS * LANES>;   // (ROW_BLOCK·TOKENS, LANES)

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = workgroup_row0(wid, nwg);
  let sums = ROW_BLOCK * TOKENS;
  for (var r = 0u; r < ROWS_PER_WG; r += ROW_BLOCK) {
    let row0 = first + r;
    if (row0 >= params.rows) { break; }
    let acc = partial_dots(row0, lane, LANES);
    for (var j = 0u; j < sums; j++) { partials[j * LANES + lane] = acc[j]; }
    for (var s = LANES / 2u; s > 0u; s >>= 1u) {
      workgroupBarrier();
      if (lane < s) {
        for (var j = 0u; j < sums; j++) { partials[j * LANES + lane] += partials[j * LANES + lane + s]; }
      }
    }
    workgroupBarrier();
    for (var j = lane; j < sums; j += LANES) {
      let row = row0 + j / TOKENS;
      if (row < params.rows) { store(j % TOKENS, row, partials[j * LANES]); }
    }
    workgroupBarrier();   // partials are rewritten by the next block
  }
}
