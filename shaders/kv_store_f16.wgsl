// The KV cache as rope_store.wgsl writes it, f16 elements packed two to a u32 (element 2i in the
// low half; pack2x16float rounds to a neighbouring f16). Same contract as kv_store_f32.wgsl.

@group(0) @binding(6) var<storage, read_write> kCache: array<u32>;   // (slots, maxSeq, nKvHeads·headDim/2): 2 f16 each
@group(0) @binding(7) var<storage, read_write> vCache: array<u32>;   // (slots, maxSeq, nKvHeads·headDim/2): 2 f16 each

fn storeK(i: u32, y: vec2<f32>) { kCache[i] = pack2x16float(y); }
fn storeV(i: u32, y: vec2<f32>) { vCache[i] = pack2x16float(y); }
