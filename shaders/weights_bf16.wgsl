// Weight-format library: bf16, read as u32 pairs (a bfloat16 is the top half of an f32, so a
// shift makes it one: no extension needed). Joined after a kernel body that defines W_BINDING
// and `params` with `cols`.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec2<u32>>;   // (rows, cols/4): 4 bfloat16 each

const CHUNK_VECS = 1u;
alias WRaw = vec2<u32>;

fn w_raw(row: u32, c: u32) -> WRaw {
  return W[row * (params.cols / 4u) + c];
}

const W_HAS_BIAS = false;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  let mask = vec2<u32>(0xffff0000u);
  return bitcast<vec4<f32>>(vec4<u32>(raw.x << 16u, raw.x & mask.x, raw.y << 16u, raw.y & mask.y));
}

fn w_scale(raw: WRaw) -> f32 {
  return 1.0;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v);
}
