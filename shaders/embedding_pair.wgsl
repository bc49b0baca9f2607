// Embedding lookup over two shards of a table sharded by rows (a table over the device's binding
// limit): one dispatch where embedding.wgsl takes one per shard. The first shard is read through the
// format's weights_*.wgsl (W, w_raw, w_dequant), the second through the same library with its
// declarations suffixed _1 (W_1 at binding W_BINDING_1, params.scale_base_1: variant-table.ts's
// renamed part). One workgroup per token; token ids ≥ vocab get a zero row where
// zero_out_of_range is set (the dispatch holding the table's last shard).

struct Params {
  rows: u32,                // rows of the first shard
  rows_1: u32,              // rows of the second, which starts where the first ends
  cols: u32,                // embedding width (a multiple of 4 · CHUNK_VECS)
  row_start: u32,           // first token id held by the first shard
  vocab: u32,               // rows of the whole table
  tokens: u32,              // entries of `tokens`
  zero_out_of_range: u32,   // 1: write zeros for ids ≥ vocab
  scale_base: u32,          // first u32 word of the f16 scales in the first shard (quantized formats)
  scale_base_1: u32,        // the same in the second shard
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
  let chunks = params.cols / (4u * CHUNK_VECS);
  if (id >= params.row_start && id - params.row_start < params.rows) {
    for (var c = lane; c < chunks; c += WG_SIZE) {
      let raw = w_raw(id - params.row_start, c);
      for (var v = 0u; v < CHUNK_VECS; v++) { out[out0 + c * CHUNK_VECS + v] = w_dequant(raw, v) * params.scale; }
    }
  } else if (id >= params.row_start + params.rows && id - params.row_start - params.rows < params.rows_1) {
    for (var c = lane; c < chunks; c += WG_SIZE) {
      let raw = w_raw_1(id - params.row_start - params.rows, c);
      for (var v = 0u; v < CHUNK_VECS; v++) { out[out0 + c * CHUNK_VECS + v] = w_dequant_1(raw, v) * params.scale; }
    }
  } else if (params.zero_out_of_range == 1u && id >= params.vocab) {
    for (var k = lane; k < params.cols / 4u; k += WG_SIZE) { out[out0 + k] = vec4<f32>(0.0); }
  }
}
