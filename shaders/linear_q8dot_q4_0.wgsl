// q4_0 for linear_q8dot_partials.wgsl: a block is (q − 8)·d with q the raw nibbles 0..15
// (weights_q4_0.wgsl; q8_dot: linear_q8dot_nibbles.wgsl). The −8 offset is applied once per block
// and token through Σ q_x (staged with X): Σ (q − 8)·q_x = Σ q·q_x − 8·Σ q_x, one integer FMA per
// block, where unpacking each word's nibbles to signed bytes ((q | 0x80) − 8, then ^ 0x80 per
// byte) would cost 3 more bit operations per word, per row.

const Q8_OFFSET = -8;

// Σ w·q_x over the block: d · (Σ q·q_x − 8·Σ q_x), exact in i32 (|Σ| < 2^20) before the scale.
fn q8_block(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>, sum_q: i32) -> f32 {
  return raw.d * f32(q8_dot(raw, x_lo, x_hi) + Q8_OFFSET * sum_q);
}
