// Streaming read roof: each workgroup sums one contiguous chunk of vec4<u32> words, its
// invocations lane-interleaved inside the chunk (neighbouring invocations read neighbouring
// 16-byte words: coalesced on a GPU; on a CPU adapter, where a workgroup's invocations run one
// SIMD batch after another, each batch walks the chunk with a short stride instead of jumping
// across the whole buffer). The workgroup then reduces and writes one partial sum. Wrapping u32
// addition keeps the result exact, so the CPU can verify it. Closest in shape to what decode does:
// read every byte once.

struct Params {
  count: u32,      // number of vec4<u32> words
  chunk: u32,      // words per workgroup, a multiple of WG_SIZE · RUN
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> data: array<vec4<u32>>;          // (count)
@group(0) @binding(1) var<storage, read_write> partials: array<u32>;      // (workgroups)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;
// Consecutive words each invocation reads per step: 1 interleaves lanes word by word (what GPUs
// coalesce best); more gives each lane whole cache lines (what CPU adapters' SIMD lanes prefer).
override RUN: u32 = 1;

var<workgroup> scratch: array<u32, WG_SIZE>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.x + wid.y * nwg.x;
  let begin = w * params.chunk;
  let end = min(begin + params.chunk, params.count);
  var acc = vec4<u32>(0u);
  for (var i = begin + lid * RUN; i < end; i += WG_SIZE * RUN) {
    for (var j = 0u; j < RUN; j++) {
      if (i + j < end) {
        acc += data[i + j];
      }
    }
  }
  scratch[lid] = acc.x + acc.y + acc.z + acc.w;
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      scratch[lid] += scratch[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    partials[w] = scratch[0];
  }
}
