// The KV cache as the fused decode attention (attention_decode_rope_io.wgsl) reads and writes it,
// f16 elements packed two to a u32 (element 2i in the low half; pack2x16float rounds to a
// neighbouring f16, as kv_store_f16.wgsl does), widened to f32 on load. Same contract as kv_rw_f32.wgsl.

@group(0) @binding(1) var<storage, read_write> kCache: array<vec2<u32>>;   // (slots, maxSeq, nKvHeads, headDim/4): 4 f16 each
@group(0) @binding(2) var<storage, read_write> vCache: array<vec2<u32>>;   // (slots, maxSeq, nKvHeads, headDim/4): 4 f16 each

fn loadK(i: u32) -> vec4<f32> {
  let w = kCache[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}
fn loadV(i: u32) -> vec4<f32> {
  let w = vCache[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}
fn storeK4(i: u32, y: vec4<f32>) { kCache[i] = vec2<u32>(pack2x16float(y.xy), pack2x16float(y.zw)); }
fn storeV4(i: u32, y: vec4<f32>) { vCache[i] = vec2<u32>(pack2x16float(y.xy), pack2x16float(y.zw)); }
