// Weight-format library: q4_1 (GGUF blocks of f16 d, f16 m, 16 bytes of nibbles: 20 bytes, word
// aligned, so kept as they are). value = q·d + m. Joined after a kernel body that defines
// W_BINDING and `params` with `cols`; weights_nibbles.wgsl is joined after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<u32>;   // (rows, cols/32, 5): d|m, 4 words of nibbles

const CHUNK_VECS = 8u;   // one block
struct WRaw {
  q: vec4<u32>,
  dm: vec2<f32>,   // (d, m)
}

fn w_raw(row: u32, c: u32) -> WRaw {
  let at = 5u * (row * (params.cols / 32u) + c);
  return WRaw(vec4<u32>(W[at + 1u], W[at + 2u], W[at + 3u], W[at + 4u]), unpack2x16float(W[at]));
}

const W_HAS_BIAS = true;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return vec4<f32>(nibbles32(raw.q, v));
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
