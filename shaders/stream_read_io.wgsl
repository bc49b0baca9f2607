// The streaming read's bindings and pipeline constants, shared by its two bodies (stream_read.wgsl,
// stream_read_tiles.wgsl).

struct Params {
  count: u32,      // number of words
  chunk: u32,      // words per workgroup, a multiple of WG_SIZE · RUN (stream_read.wgsl)
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> data: array<Word>;               // (count)
@group(0) @binding(1) var<storage, read_write> partials: array<u32>;      // (workgroups), or (workgroups, WG_SIZE) from stream_read_lanes
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;
// Consecutive words each invocation reads per step in stream_read.wgsl: 1 interleaves lanes word by
// word (what GPUs coalesce best); more gives each lane whole cache lines (what CPU adapters' SIMD
// lanes prefer).
override RUN: u32 = 1;
