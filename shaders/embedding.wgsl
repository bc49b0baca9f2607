// Embedding lookup: out[t] = dequantized row tokens[t] of the table (vocab, cols) · scale. One workgroup
// per token; its invocations walk the row's chunks. A table sharded by rows is one dispatch per
// shard; each writes the tokens whose rows it holds. Token ids ≥ vocab read nothing and get a
// zero row (written by the dispatch with zero_out_of_range set, the last shard's).
// Joined with a weights_*.wgsl (w_raw, w_dequant).

struct Params {
  rows: u32,                // table rows in this shard
  cols: u32,                // embedding width (a multiple of 4 · CHUNK_VECS)
  row_start: u32,           // first token id held by this shard
  vocab: u32,               // rows of the whole table
  tokens: u32,              // entries of `tokens`
  zero_out_of_range: u32,   // 1: write zeros for ids ≥ vocab
  scale_base: u32,          // first u32 word of the f16 scales in the weight buffer (quantized formats)
  scale: f32,               // multiplies every value (Gemma: √dim; 1 elsewhere)
}

const W_BINDING = 3u;
@group(0) @binding(0) var<storage, read> tokens: array<u32>;            // (tokens)
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;   // (tokens, cols/4)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 64;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = wid.x + wid.y * nwg.x;
  if (t >= params.tokens) { return; }
  let id = tokens[t];
  let out0 = t * (params.cols / 4u);
  if (id >= params.row_start && id - params.row_start < params.rows) {
    let chunks = params.cols / (4u * CHUNK_VECS);
    for (var c = lane; c < chunks; c += WG_SIZE) {
      let raw = w_raw(id - params.row_start, c);
      for (var v = 0u; v < CHUNK_VECS; v++) { out[out0 + c * CHUNK_VECS + v] = w_dequant(raw, v) * params.scale; }
    }
  } else if (params.zero_out_of_range == 1u && id >= params.vocab) {
    for (var k = lane; k < params.cols / 4u; k += WG_SIZE) { out[out0 + k] = vec4<f32>(0.0); }
  }
}
