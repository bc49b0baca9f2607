// Pass 2 of attention_decode.wgsl: merge the splits' partials of each (row, head) into the output,
// out = Σ_s exp(m_s − M) · acc_s / Σ_s exp(m_s − M) · l_s with M = max_s m_s (empty splits have
// m = −3e38, l = 0 and weigh nothing). One invocation per (row, head, 4 dims), grid-stride.

struct Params {
  count: u32,      // R · nHeads · headDim/4
  stride: u32,     // invocations in the grid
  splits: u32,
  d4: u32,         // headDim / 4
}

@group(0) @binding(0) var<storage, read> partAcc: array<vec4<f32>>;       // (R, nHeads, splits, headDim/4)
@group(0) @binding(1) var<storage, read> partMl: array<vec2<f32>>;        // (R, nHeads, splits): (m, l)
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;     // (R, nHeads, headDim/4)
@group(0) @binding(3) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = gid.x + gid.y * nwg.x * WG_SIZE; i < params.count; i += params.stride) {
    let head = i / params.d4;
    let base = head * params.splits;
    var m = partMl[base].x;
    for (var s = 1u; s < params.splits; s++) {
      m = max(m, partMl[base + s].x);
    }
    var l = 0.0;
    var a = vec4<f32>(0.0);
    for (var s = 0u; s < params.splits; s++) {
      let ml = partMl[base + s];
      let w = exp(ml.x - m);
      l += ml.y * w;
      a += partAcc[(base + s) * params.d4 + i % params.d4] * w;
    }
    out[i] = a / l;
  }
}
