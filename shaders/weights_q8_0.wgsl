// Weight-format library: q8_0 (GGUF blocks of 32 int8 + f16 scale, repacked: quants first, then
// scales two per word; see src/kernels/weights.ts). Joined after a kernel body that defines
// W_BINDING and `params` with `cols` and `scale_base`; weights_scales.wgsl (block_scale)
// is joined after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec4<u32>>;             // (rows, cols/32, 2): 16 int8 each

const CHUNK_VECS = 8u;   // one block
struct WRaw {
  lo: vec4<u32>,   // elements 0..15
  hi: vec4<u32>,   // elements 16..31
  d: f32,
}

// Block c of `row`, as loaded.
fn w_raw(row: u32, c: u32) -> WRaw {
  let block = row * (params.cols / 32u) + c;
  return WRaw(W[2u * block], W[2u * block + 1u], block_scale(block));
}

// Weight value = w_quants · w_scale + w_bias.
const W_HAS_BIAS = false;

// Quants 4v..4v+3 of a loaded block: four sign-extended bytes.
fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  let word = select(raw.lo, raw.hi, v >= 4u)[v & 3u];
  let bytes = vec4<i32>(bitcast<i32>(word << 24u), bitcast<i32>(word << 16u), bitcast<i32>(word << 8u), bitcast<i32>(word)) >> vec4<u32>(24u);
  return vec4<f32>(bytes);
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.d;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

// Weights 4v..4v+3 of a loaded block.
fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v) * raw.d;
}
