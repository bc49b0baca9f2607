// Weight-format library: q4_k (GGUF super-blocks of 256 weights in 144 bytes: f16 d, f16 dmin,
// 12 bytes of 6-bit scales and mins, 128 bytes of nibbles), repacked at upload without changing
// its size: the 16-byte header, then the 8 sub-blocks of 32 weights, 16 bytes each, byte j
// holding weight j (low nibble) and j + 16 (high nibble); see src/kernels/weight-formats.ts.
// A chunk is one sub-block: value = q·(d·sc) − dmin·m. Joined after a kernel body that defines
// W_BINDING and `params` with `cols`; weights_nibbles.wgsl and weights_k_scales.wgsl after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec4<u32>>;   // (rows, cols/256, 9): header, 8 sub-blocks

const CHUNK_VECS = 8u;   // one 32-weight sub-block
struct WRaw {
  q: vec4<u32>,
  sb: vec2<f32>,   // (scale, bias)
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let at = 9u * (row * (params.cols / 256u) + c / 8u);
  let s = c % 8u;
  return WRaw(W[at + 1u + s], k_scale_bias(W[at], s));
}

const W_HAS_BIAS = true;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(nibbles32(raw.q, v));
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.sb.x;
}

fn w_bias(raw: WRaw) -> f32 {
  return raw.sb.y;
}

fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v) * raw.sb.x + raw.sb.y;
}
