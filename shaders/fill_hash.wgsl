// Fills a buffer with a reproducible u32 pattern, data[i] = hash(i ^ seed), for the bandwidth roofs.
// The CPU recomputes the same hash to check what the read and copy kernels saw.

struct Params {
  count: u32,      // number of u32 words
  seed: u32,
  stride: u32,     // total invocations in the grid (grid-stride loop)
  _pad: u32,
}

@group(0) @binding(0) var<storage, read_write> data: array<u32>;  // (count)
@group(0) @binding(1) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

fn hash(x: u32) -> u32 {
  var h = x * 0x9E3779B1u;
  h = h ^ (h >> 15u);
  h = h * 0x85EBCA77u;
  h = h ^ (h >> 13u);
  return h;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let linear = gid.x + gid.y * nwg.x * WG_SIZE;
  for (var i = linear; i < params.count; i += params.stride) {
    data[i] = hash(i ^ params.seed);
  }
}
