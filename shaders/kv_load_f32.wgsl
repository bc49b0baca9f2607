// The KV cache as the attention kernels read it, f32 elements. Joined with an attention_*.wgsl body;
// kv_load_f16.wgsl has the same contract: bindings 1 and 2, and loadK / loadV of four consecutive
// elements, indexed in units of four ((slot·maxSeq + pos)·nKvHeads + kv head)·headDim/4 + c.

@group(0) @binding(1) var<storage, read> kCache: array<vec4<f32>>;   // (slots, maxSeq, nKvHeads, headDim/4)
@group(0) @binding(2) var<storage, read> vCache: array<vec4<f32>>;   // (slots, maxSeq, nKvHeads, headDim/4)

fn loadK(i: u32) -> vec4<f32> { return kCache[i]; }
fn loadV(i: u32) -> vec4<f32> { return vCache[i]; }
