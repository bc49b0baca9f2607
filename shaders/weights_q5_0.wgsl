// Weight-format library: q5_0 (GGUF blocks of f16 d, u32 of fifth bits, 16 bytes of nibbles: 22
// bytes, repacked: the 20 bytes of bits first, 5 words a block, then the scales two per word; see
// src/kernels/weight-formats.ts). value = (q − 16)·d, q = nibble | fifth bit << 4. Joined after a
// kernel body that defines W_BINDING and `params` with `cols` and `scale_base`; weights_nibbles.wgsl
// and weights_scales.wgsl (block_scale) are joined after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<u32>;   // (rows, cols/32, 5): qh, 4 words of nibbles

const CHUNK_VECS = 8u;   // one block
struct WRaw {
  q: vec4<u32>,
  qh: u32,
  d: f32,
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let block = row * (params.cols / 32u) + c;
  let at = 5u * block;
  return WRaw(vec4<u32>(W[at + 1u], W[at + 2u], W[at + 3u], W[at + 4u]), W[at], block_scale(block));
}

// Signed quants (q − 16): no bias term, so the matvec skips Σx.
const W_HAS_BIAS = false;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(nibbles32(raw.q, v) | fifth_bits(raw.qh, v)) - vec4<i32>(16));
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.d;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v) * raw.d;
}
