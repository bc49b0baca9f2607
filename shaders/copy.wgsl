// Read+write roof: dst = src in vec4<u32> words; each workgroup copies one contiguous chunk,
// its invocations lane-interleaved inside it (see stream_read.wgsl for why).

struct Params {
  count: u32,      // number of vec4<u32> words
  chunk: u32,      // words per workgroup, a multiple of WG_SIZE
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;          // (count)
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;    // (count)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let begin = (wid.x + wid.y * nwg.x) * params.chunk;
  let end = min(begin + params.chunk, params.count);
  for (var i = begin + lid; i < end; i += WG_SIZE) {
    dst[i] = src[i];
  }
}
