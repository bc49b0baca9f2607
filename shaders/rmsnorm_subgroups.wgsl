enable subgroups;

// RMSNorm with a subgroup reduction (same bindings as rmsnorm.wgsl): each subgroup adds its
// lanes, its first lane stores the sum, and every invocation adds the per-subgroup sums —
// one barrier instead of log2(WG_SIZE). Assumes subgroups are consecutive runs of
// local_invocation_index (true of Vulkan, Metal and D3D12 for 1-D workgroups).

struct Params {
  dim: u32,
  eps: f32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;            // (R, dim)
@group(0) @binding(1) var<storage, read> weight: array<f32>;       // (dim)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;    // (R, dim), not aliasing x
@group(0) @binding(3) var<uniform> params: Params;

override WG_SIZE: u32 = 256;   // a power of two

var<workgroup> partial: array<f32, WG_SIZE>;   // one sum per subgroup

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) sgSize: u32) {
  let base = wid.x * params.dim;
  var sum = 0.0;
  for (var i = lid; i < params.dim; i += WG_SIZE) {
    let v = x[base + i];
    sum += v * v;
  }
  let subgroupSum = subgroupAdd(sum);
  if (lane == 0u) {
    partial[lid / sgSize] = subgroupSum;
  }
  workgroupBarrier();
  var total = 0.0;
  for (var s = 0u; s < (WG_SIZE + sgSize - 1u) / sgSize; s++) {
    total += partial[s];
  }
  let inv = inverseSqrt(total / f32(params.dim) + params.eps);
  for (var i = lid; i < params.dim; i += WG_SIZE) {
    out[base + i] = x[base + i] * inv * weight[i];
  }
}
