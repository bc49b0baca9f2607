// RMSNorm, one workgroup per row: out[r] = x[r] / sqrt(mean(x[r]²) + eps) · weight.
// The sum of squares is a tree reduction in workgroup memory (rmsnorm_subgroups.wgsl: subgroups).

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

var<workgroup> partial: array<f32, WG_SIZE>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * params.dim;
  var sum = 0.0;
  for (var i = lid; i < params.dim; i += WG_SIZE) {
    let v = x[base + i];
    sum += v * v;
  }
  partial[lid] = sum;
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    workgroupBarrier();
  }
  let inv = inverseSqrt(partial[0] / f32(params.dim) + params.eps);
  for (var i = lid; i < params.dim; i += WG_SIZE) {
    out[base + i] = x[base + i] * inv * weight[i];
  }
}
