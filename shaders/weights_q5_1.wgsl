// Weight-format library: q5_1 (GGUF blocks of f16 d, f16 m, u32 of fifth bits, 16 bytes of
// nibbles: 24 bytes, word aligned, kept as they are). value = q·d + m, q = nibble | fifth bit << 4.
// Joined after a kernel body that defines W_BINDING and `params` with `cols`;
// weights_nibbles.wgsl is joined after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<u32>;   // (rows, cols/32, 6): d|m, qh, 4 words of nibbles

const CHUNK_VECS = 8u;   // one block
struct WRaw {
  q: vec4<u32>,
  qh: u32,
  dm: vec2<f32>,   // (d, m)
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let at = 6u * (row * (params.cols / 32u) + c);
  return WRaw(vec4<u32>(W[at + 2u], W[at + 3u], W[at + 4u], W[at + 5u]), W[at + 1u], unpack2x16float(W[at]));
}

const W_HAS_BIAS = true;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(nibbles32(raw.q, v) | fifth_bits(raw.qh, v));
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.dm.x;
}

fn w_bias(raw: WRaw) -> f32 {
  return raw.dm.y;
}

fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return w_quants(raw, v) * raw.dm.x + raw.dm.y;
}
