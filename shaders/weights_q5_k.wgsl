// Weight-format library: q5_k (GGUF super-blocks of 256 weights in 176 bytes: f16 d, f16 dmin,
// 12 bytes of 6-bit scales and mins, 32 bytes of fifth bits, 128 bytes of nibbles), repacked at
// upload without changing its size: the 16-byte header, 8 words of fifth bits (word s: bit j =
// weight j of sub-block s), then the 8 sub-blocks' nibbles as in q4_k; see
// src/kernels/weight-formats.ts. value = q·(d·sc) − dmin·m. Joined after a kernel body that
// defines W_BINDING and `params` with `cols`; weights_nibbles.wgsl and weights_k_scales.wgsl after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec4<u32>>;   // (rows, cols/256, 11): header, 2 of fifth bits, 8 sub-blocks

const CHUNK_VECS = 8u;   // one 32-weight sub-block
struct WRaw {
  q: vec4<u32>,
  qh: u32,
  sb: vec2<f32>,   // (scale, bias)
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let at = 11u * (row * (params.cols / 256u) + c / 8u);
  let s = c % 8u;
  return WRaw(W[at + 3u + s], W[at + 1u + s / 4u][s % 4u], k_scale_bias(W[at], s));
}

const W_HAS_BIAS = true;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(nibbles32(raw.q, v) | fifth_bits(raw.qh, v));
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
