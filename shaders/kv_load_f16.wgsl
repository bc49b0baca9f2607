// The KV cache as the attention kernels read it, f16 elements packed two to a u32 (element 2i in
// the low half), widened to f32 on load: the kernels compute and accumulate in f32. Same contract
// as kv_load_f32.wgsl. unpack2x16float needs no shader-f16; the cache is f16 where the device
// has it (kvElement in src/kernels/select.ts).

@group(0) @binding(1) var<storage, read> kCache: array<vec2<u32>>;   // (slots, maxSeq, nKvHeads, headDim/4): 4 f16 each
@group(0) @binding(2) var<storage, read> vCache: array<vec2<u32>>;   // (slots, maxSeq, nKvHeads, headDim/4): 4 f16 each

fn loadK(i: u32) -> vec4<f32> {
  let w = kCache[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}
fn loadV(i: u32) -> vec4<f32> {
  let w = vCache[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}
