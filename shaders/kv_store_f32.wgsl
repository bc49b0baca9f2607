// The KV cache as rope_store.wgsl writes it, f32 elements. Same contract as kv_store_f16.wgsl:
// bindings 6 and 7, and storeK / storeV of the pair of elements (2i, 2i+1) of a cache row
// ((slot·maxSeq + pos)·nKvHeads·headDim/2 + i).

@group(0) @binding(6) var<storage, read_write> kCache: array<vec2<f32>>;   // (slots, maxSeq, nKvHeads·headDim/2)
@group(0) @binding(7) var<storage, read_write> vCache: array<vec2<f32>>;   // (slots, maxSeq, nKvHeads·headDim/2)

fn storeK(i: u32, y: vec2<f32>) { kCache[i] = y; }
fn storeV(i: u32, y: vec2<f32>) { vCache[i] = y; }
