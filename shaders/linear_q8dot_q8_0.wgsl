// q8_0 for linear_q8dot_partials.wgsl: a block is q·d; the weights' int8 are already packed four
// per word in element order (weights_q8_0.wgsl: lo = elements 0..15, hi = 16..31), as X's are.

// Σ q_w·q_x over a block: x_lo holds X's elements 0..15, x_hi 16..31, four int8 per word.
fn q8_dot(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>) -> i32 {
  return dot4I8Packed(raw.lo.x, x_lo.x) + dot4I8Packed(raw.lo.y, x_lo.y) + dot4I8Packed(raw.lo.z, x_lo.z) + dot4I8Packed(raw.lo.w, x_lo.w)
       + dot4I8Packed(raw.hi.x, x_hi.x) + dot4I8Packed(raw.hi.y, x_hi.y) + dot4I8Packed(raw.hi.z, x_hi.z) + dot4I8Packed(raw.hi.w, x_hi.w);
}

// Σ w·q_x over the block: d · Σ q·q_x, exact in i32 before the scale.
fn q8_block(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>, sum_q: i32) -> f32 {
  return raw.d * f32(q8_dot(raw, x_lo, x_hi));
}
