// Σ q_w·q_x of one block for linear_q8dot_partials.wgsl, for the formats whose 32-weight blocks are
// 16 bytes of nibbles 0..15 with byte j holding weight j (low nibble) and j + 16 (high nibble):
// q4_0 (weights_q4_0.wgsl) and q4_k's sub-blocks (weights_q4_k.wgsl). Nibbles 0..15 read as signed
// i8 are themselves, so dot4I8Packed takes them as they are, with one mask (low) or shift and mask
// (high) per word; the format part applies the offset (q4_0's −8) or the mins (q4_k) through Σ q_x.

const NIBBLES = 0x0F0F0F0Fu;

// Σ q_w·q_x over a block: x_lo holds X's elements 0..15, x_hi 16..31, four int8 per word.
fn q8_dot(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>) -> i32 {
  let w = raw.q;
  let low = w & vec4<u32>(NIBBLES);
  let high = (w >> vec4<u32>(4u)) & vec4<u32>(NIBBLES);
  return dot4I8Packed(low.x, x_lo.x) + dot4I8Packed(low.y, x_lo.y) + dot4I8Packed(low.z, x_lo.z) + dot4I8Packed(low.w, x_lo.w)
       + dot4I8Packed(high.x, x_hi.x) + dot4I8Packed(high.y, x_hi.y) + dot4I8Packed(high.z, x_hi.z) + dot4I8Packed(high.w, x_hi.w);
}
