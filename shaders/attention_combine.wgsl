// Merges split decode attention's partials (attention_decode_out.wgsl's write_result) into the
// output: out = Σ_s exp(m_s − M) · acc_s / Σ_s exp(m_s − M) · l_s with M = max_s m_s (empty splits
// have m = −3e38, l = 0 and weigh nothing). Recorded only where a step runs more than one split.
// One workgroup per (row, query head): invocation i merges dims 4i…4i+3 over the splits.

struct Params {
  heads: u32,      // R · nHeads
  splits: u32,
  d4: u32,         // headDim / 4
  _pad0: u32,
}

@group(0) @binding(0) var<storage, read> partAcc: array<vec4<f32>>;       // (R, nHeads, splits, headDim/4)
@group(0) @binding(1) var<storage, read> partMl: array<vec2<f32>>;        // (R, nHeads, splits): (m, l)
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;     // (R, nHeads, headDim/4)
@group(0) @binding(3) var<uniform> params: Params;

override WG_SIZE: u32 = 32;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let head = wid.x + wid.y * nwg.x;
  if (head >= params.heads) { return; }
  let base = head * params.splits;
  var m = partMl[base].x;
  for (var s = 1u; s < params.splits; s++) { m = max(m, partMl[base + s].x); }
  for (var i = lid; i < params.d4; i += WG_SIZE) {
    var l = 0.0;
    var a = vec4<f32>(0.0);
    for (var s = 0u; s < params.splits; s++) {
      let ml = partMl[base + s];
      let w = exp(ml.x - m);
      l += ml.y * w;
      a += partAcc[(base + s) * params.d4 + i] * w;
    }
    out[head * params.d4 + i] = a / l;
  }
}
