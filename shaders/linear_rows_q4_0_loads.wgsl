// linear_rows_q4_0.wgsl without optional features: every invocation loads the X vectors of a block
// itself. Joined before linear_rows_q4_0.wgsl, linear_io.wgsl and weights_q4_0.wgsl.

// The 8 vectors of block c of each token's X.
fn block_x(c: u32) -> array<array<vec4<f32>, 8>, MAX_TOKENS> {
  var x: array<array<vec4<f32>, 8>, MAX_TOKENS>;
  for (var t = 0u; t < TOKENS; t++) {
    for (var v = 0u; v < 8u; v++) { x[t][v] = X[token[t] * (params.cols / 4u) + 8u * c + v]; }
  }
  return x;
}

// The norm weight of block c's 8 vectors.
fn block_gain(c: u32) -> array<vec4<f32>, 8> {
  var g: array<vec4<f32>, 8>;
  for (var v = 0u; v < 8u; v++) { g[v] = x_gain(8u * c + v); }
  return g;
}

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  rows_q4_0(lane, wid, nwg);
}
