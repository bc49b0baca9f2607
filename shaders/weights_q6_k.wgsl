// Weight-format library: q6_k (GGUF super-blocks of 256 weights in 210 bytes: 128 bytes of low
// nibbles, 64 of high bit pairs, 16 int8 sub-block scales, f16 d), repacked at upload: 208 bytes
// a super-block — 16 sub-blocks of 16 weights × 2 words of nibbles (byte k: weight k low, k + 8
// high), then 16 words of high bit pairs (word s: bits 2k..2k+1 = weight k of sub-block s), then
// the 16 scales — and after all super-blocks the f16 d's two per word; see
// src/kernels/weight-formats.ts. A chunk is one 16-weight sub-block: value = (q − 32)·(d·sc).
// Joined after a kernel body that defines W_BINDING and `params` with `cols` and `scale_base`;
// weights_scales.wgsl (block_scale) after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<u32>;   // (rows, cols/256, 52)

const CHUNK_VECS = 4u;   // one 16-weight sub-block
struct WRaw {
  ql: vec2<u32>,
  qh: u32,
  scale: f32,
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let block = row * (params.cols / 256u) + c / 16u;
  let s = c % 16u;
  let at = 52u * block;
  let sc = bitcast<i32>(W[at + 48u + s / 4u] << (24u - 8u * (s % 4u))) >> 24u;
  return WRaw(vec2<u32>(W[at + 2u * s], W[at + 2u * s + 1u]), W[at + 32u + s], block_scale(block) * f32(sc));
}

// Signed quants (q − 32): no bias term.
const W_HAS_BIAS = false;

// Word v & 1 holds weights 4(v&1).. in its low nibbles and 8 + 4(v&1).. in its high ones.
fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  let low = (vec4<u32>(raw.ql[v & 1u]) >> (vec4<u32>(0u, 8u, 16u, 24u) + select(0u, 4u, v >= 2u))) & vec4<u32>(15u);
  let high = (vec4<u32>(raw.qh) >> (vec4<u32>(0u, 2u, 4u, 6u) + 8u * v)) & vec4<u32>(3u);
  return vec4<f32>(vec4<i32>(low | (high << vec4<u32>(4u))) - vec4<i32>(32));
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.scale;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v) * raw.scale;
}
