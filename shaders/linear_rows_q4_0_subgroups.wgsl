enable subgroups;
diagnostic(off, subgroup_uniformity);

// linear_rows_q4_0.wgsl with X shared through the subgroup: a block's 8 vectors of X are loaded
// once per subgroup (lane l loads vector l, and l + 4 where subgroups are 4 wide) and broadcast,
// instead of by every invocation: on a CPU adapter a storage load runs lane by lane, a broadcast
// is a register shuffle. SUBGROUP is the subgroup size the pipeline is built for (4 or 8); where
// the shader runs at another size it loads X itself. LANES is a multiple of SUBGROUP (linear.ts
// checks it), so no subgroup has lanes missing. Joined before linear_rows_q4_0.wgsl,
// linear_io.wgsl and weights_q4_0.wgsl.

override SUBGROUP: u32 = 8;

var<private> sg_size: u32;
var<private> sg_lane: u32;

// The 8 vectors of a block from each lane's own vector(s): a = vector sg_lane, b = vector sg_lane + 4.
fn share(a: vec4<f32>, b: vec4<f32>) -> array<vec4<f32>, 8> {
  if (SUBGROUP == 8u) {
    return array<vec4<f32>, 8>(subgroupBroadcast(a, 0u), subgroupBroadcast(a, 1u), subgroupBroadcast(a, 2u), subgroupBroadcast(a, 3u),
                               subgroupBroadcast(a, 4u), subgroupBroadcast(a, 5u), subgroupBroadcast(a, 6u), subgroupBroadcast(a, 7u));
  }
  return array<vec4<f32>, 8>(subgroupBroadcast(a, 0u), subgroupBroadcast(a, 1u), subgroupBroadcast(a, 2u), subgroupBroadcast(a, 3u),
                             subgroupBroadcast(b, 0u), subgroupBroadcast(b, 1u), subgroupBroadcast(b, 2u), subgroupBroadcast(b, 3u));
}

// The 8 vectors of block c of each token's X.
fn block_x(c: u32) -> array<array<vec4<f32>, 8>, MAX_TOKENS> {
  var x: array<array<vec4<f32>, 8>, MAX_TOKENS>;
  let x_stride = params.cols / 4u;
  for (var t = 0u; t < TOKENS; t++) {
    let first = token[t] * x_stride + 8u * c;
    if (sg_size == SUBGROUP) {
      x[t] = share(X[first + sg_lane % 8u], X[first + (sg_lane + 4u) % 8u]);
    } else {
      for (var v = 0u; v < 8u; v++) { x[t][v] = X[first + v]; }
    }
  }
  return x;
}

// The norm weight of block c's 8 vectors.
fn block_gain(c: u32) -> array<vec4<f32>, 8> {
  if (sg_size == SUBGROUP) { return share(x_gain(8u * c + sg_lane % 8u), x_gain(8u * c + (sg_lane + 4u) % 8u)); }
  var g: array<vec4<f32>, 8>;
  for (var v = 0u; v < 8u; v++) { g[v] = x_gain(8u * c + v); }
  return g;
}

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(subgroup_invocation_id) subgroup_lane: u32,
        @builtin(subgroup_size) subgroup_size: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  sg_size = subgroup_size;
  sg_lane = subgroup_lane;
  rows_q4_0(lane, wid, nwg);
}
