// q4_k for linear_q8dot_partials.wgsl: a 32-weight sub-block is q·(d·sc) − dmin·m with q the raw
// nibbles 0..15 (weights_q4_k.wgsl's w_raw: raw.sb = (d·sc, −dmin·m); q8_dot:
// linear_q8dot_nibbles.wgsl). The mins go through Σ q_x as q4_0's offset does:
// Σ (q·s + b)·q_x = s·Σ q·q_x + b·Σ q_x.

fn q8_block(raw: WRaw, x_lo: vec4<u32>, x_hi: vec4<u32>, sum_q: i32) -> f32 {
  return fma(raw.sb.x, f32(q8_dot(raw, x_lo, x_hi)), raw.sb.y * f32(sum_q));
}
