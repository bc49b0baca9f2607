// The decode attention kernels' binding contract (attention_decode.wgsl and
// attention_decode_subgroups.wgsl), joined after either: pass 1 writes, per (row, query head), one
// unnormalised partial per stretch of keys (its running max m, its sum l = Σ exp(score − m) and
// acc = Σ exp(score − m) · v), and attention_combine.wgsl merges them. Workgroup (split s, kv head
// g, row r) writes its partials at parts = splits · (partials per workgroup: 1, or the subgroup
// kernel's teams).

struct Params {
  nHeads: u32,
  maxSeq: u32,
  splits: u32,     // workgroups per (row, kv head)
  scale: f32,      // 1 / sqrt(headDim)
  window: u32,     // sliding window: keys pos−window+1…pos; 0 = all keys 0…pos
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> q: array<vec4<f32>>;                // (R, nHeads, HEAD_DIM/4)
// bindings 1 and 2 (kCache, vCache) and loadK / loadV: kv_load_f32.wgsl or kv_load_f16.wgsl
@group(0) @binding(3) var<storage, read> rows: array<vec2<u32>>;             // (R): (slot, pos)
@group(0) @binding(4) var<storage, read_write> partAcc: array<vec4<f32>>;    // (R, nHeads, parts, HEAD_DIM/4)
@group(0) @binding(5) var<storage, read_write> partMl: array<vec2<f32>>;     // (R, nHeads, parts): (m, l)
@group(0) @binding(6) var<uniform> params: Params;
