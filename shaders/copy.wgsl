// Read+write roof: dst = src in vec4<u32> words, grid-stride loop.

struct Params {
  count: u32,      // number of vec4<u32> words
  stride: u32,     // total invocations in the grid
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;          // (count)
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;    // (count)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let linear = gid.x + gid.y * nwg.x * WG_SIZE;
  for (var i = linear; i < params.count; i += params.stride) {
    dst[i] = src[i];
  }
}
