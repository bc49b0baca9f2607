// The KV cache as the fused decode attention (attention_decode_rope_io.wgsl) reads and writes it,
// f32 elements: kv_load_f32.wgsl's loads on read-write bindings, plus storeK4 / storeV4 of four
// consecutive elements at the same index ((slot·maxSeq + pos)·nKvHeads + kv head)·headDim/4 + c.
// kv_rw_f16.wgsl has the same contract.

@group(0) @binding(1) var<storage, read_write> kCache: array<vec4<f32>>;   // (slots, maxSeq, nKvHeads, headDim/4)
@group(0) @binding(2) var<storage, read_write> vCache: array<vec4<f32>>;   // (slots, maxSeq, nKvHeads, headDim/4)

fn loadK(i: u32) -> vec4<f32> { return kCache[i]; }
fn loadV(i: u32) -> vec4<f32> { return vCache[i]; }
fn storeK4(i: u32, y: vec4<f32>) { kCache[i] = y; }
fn storeV4(i: u32, y: vec4<f32>) { vCache[i] = y; }
