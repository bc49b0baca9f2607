// q4_0 for linear_q8dot.wgsl: Σ q_w·q_x of one block, q_w the raw nibbles 0..15 (weights_q4_0.wgsl:
// word k holds elements 4k..4k+3 in its low nibbles and 16+4k..16+4k+3 in its high ones).
// The −8 offset is applied once per block and token through Σ q_x (Q8_OFFSET, staged with X):
// Σ (q − 8)·q_x = Σ q·q_x − 8·Σ q_x. This costs one integer FMA per block, where unpacking each
// word's nibbles to signed bytes ((q | 0x80) − 8, then ^ 0x80 per byte) would cost 3 more bit
// operations per word, per row; nibbles 0..15 read as signed i8 are themselves, so dot4I8Packed
// takes them as they are, with one mask (low) or shift and mask (high) per word.

const Q8_OFFSET = -8;
const NIBBLES = 0x0F0F0F0Fu;

// Σ q_w·q_x over a block: x_lo holds X's elements 0..15, x_hi 16..31, four int8 per word.
fn q8_dot(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>) -> i32 {
  let w = raw.q;
  let low = w & vec4<u32>(NIBBLES);
  let high = (w >> vec4<u32>(4u)) & vec4<u32>(NIBBLES);
  return dot4I8Packed(low.x, x_lo.x) + dot4I8Packed(low.y, x_lo.y) + dot4I8Packed(low.z, x_lo.z) + dot4I8Packed(low.w, x_lo.w)
       + dot4I8Packed(high.x, x_hi.x) + dot4I8Packed(high.y, x_hi.y) + dot4I8Packed(high.z, x_hi.z) + dot4I8Packed(high.w, x_hi.w);
}
