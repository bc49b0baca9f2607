// The decode attention's inputs where RoPE ran apart (rope_store.wgsl wrote the rotated queries
// and the new key and value): the queries and the read-only cache (a kv_load_*.wgsl joins
// bindings 1 and 2). attention_decode_rope_io.wgsl is the fused alternative with the same hooks.

struct Params {
  nHeads: u32,
  maxSeq: u32,
  splits: u32,     // workgroups per (row, kv head)
  scale: f32,      // 1 / sqrt(headDim)
  window: u32,     // sliding window: keys pos−window+1…pos; 0 = all keys 0…pos
  minChunk: u32,   // fewest keys a split takes
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> q: array<vec4<f32>>;                // (R, nHeads, HEAD_DIM/4), rotated
@group(0) @binding(6) var<uniform> params: Params;

// The GROUP queries of kv head g of row r, pre-scaled, into qs. Call from uniform control flow; a
// workgroupBarrier must follow.
fn load_queries(lid: u32, r: u32, g: u32, kBegin: u32, kEnd: u32) {
  let head0 = r * params.nHeads + g * GROUP;
  for (var i = lid; i < GROUP * D4; i += WG_SIZE) { qs[i] = q[head0 * D4 + i] * params.scale; }
}
