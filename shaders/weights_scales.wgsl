// The f16 block scales of the quantized formats (weights_q8_0.wgsl, weights_q4_0.wgsl), joined
// after them: a region of the weight buffer from params.scale_base, two scales per word (block 2i
// in the low half of word i). Bound a second time as u32 words (W is bound as 16-byte vectors).

@group(0) @binding(W_BINDING + 1u) var<storage, read> W_scales: array<u32>;   // same buffer as W

fn block_scale(block: u32) -> f32 {
  let pair = unpack2x16float(W_scales[params.scale_base + block / 2u]);
  return select(pair.x, pair.y, (block & 1u) == 1u);
}
