// Weight-format library: q4_0 (GGUF blocks of 16 bytes of nibbles + f16 scale, repacked: quants
// first, then scales two per word; see src/kernels/weights.ts). Byte j of a block holds element j
// in its low nibble and element j+16 in its high nibble; value = (q − 8)·d. Joined after a kernel
// body that defines W_BINDING and `params` with `cols` and `scale_base`; weights_scales.wgsl (block_scale)
// is joined after it.

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec4<u32>>;             // (rows, cols/32): 16 bytes each

const CHUNK_VECS = 8u;   // one block
struct WRaw {
  q: vec4<u32>,
  d: f32,
}

// Block c of `row`, as loaded.
fn w_raw(row: u32, c: u32) -> WRaw {
  let block = row * (params.cols / 32u) + c;
  return WRaw(W[block], block_scale(block));
}

// Weight value = w_quants · w_scale + w_bias.
const W_HAS_BIAS = true;

// Quants 4v..4v+3 of a loaded block: word v & 3 holds elements 4(v&3).. in its low nibbles and
// 16 + 4(v&3).. in its high nibbles, so v < 4 reads low nibbles and v ≥ 4 high ones.
fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  let shift = vec4<u32>(0u, 8u, 16u, 24u) + select(0u, 4u, v >= 4u);
  return vec4<f32>((vec4<u32>(raw.q[v & 3u]) >> shift) & vec4<u32>(15u));
}

fn w_scale(raw: WRaw) -> f32 {
  return raw.d;
}

fn w_bias(raw: WRaw) -> f32 {
  return -8.0 * raw.d;
}

// Weights 4v..4v+3 of a loaded block.
// (q − 8)·d as ggml computes it: q·d − 8d would give +0 where ggml gives −0 (q = 8, d < 0).
fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return (w_quants(raw, v) - 8.0) * raw.d;
}
