// Residual add in place, a += b, over n = rows · features values (grid-stride).

struct Params {
  n: u32,          // elements
  stride: u32,     // invocations in the grid
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> a: array<f32>;      // (R, features), updated in place
@group(0) @binding(1) var<storage, read> b: array<f32>;            // (R, features)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = gid.x + gid.y * nwg.x * WG_SIZE; i < params.n; i += params.stride) {
    a[i] += b[i];
  }
}
