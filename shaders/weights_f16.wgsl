// Weight-format library: f16, read as u32 pairs with unpack2x16float (no shader-f16 needed).
// Joined after a kernel body that defines W_BINDING and `params` with `cols`.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec2<u32>>;   // (rows, cols/4): 4 halves each

const CHUNK_VECS = 1u;
alias WRaw = vec2<u32>;

// Chunk c (weights 4c..4c+3) of `row`, as loaded.
fn w_raw(row: u32, c: u32) -> WRaw {
  return W[row * (params.cols / 4u) + c];
}

// Weight value = w_quants · w_scale + w_bias; f16 weights are their own quants.
const W_HAS_BIAS = false;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(raw.x), unpack2x16float(raw.y));
}

fn w_scale(raw: WRaw) -> f32 {
  return 1.0;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

// Weights 4v..4v+3 of a loaded chunk.
fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v);
}
