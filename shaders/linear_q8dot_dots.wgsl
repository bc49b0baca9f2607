// The 8-bit-activation bodies' partial sums over one matrix (linear_q8dot_partials.wgsl's q8_partials).
fn partial_dots(row0: u32, lane: u32, stride: u32) -> array<f32, MAX_PARTIALS> {
  return q8_partials(row0, lane, stride, params.rows - 1u);
}
