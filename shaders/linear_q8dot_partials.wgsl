// The generic partial dot products of the 8-bit-activation kernels (linear_q8dot.wgsl's staged X),
// joined after it by the bodies that take them (linear_q8dot_rows.wgsl and matvec_wide.wgsl, through
// partial_dots), before the format's parts, which supply
//   q8_raw(row, c) -> Q8Raw: block c (32 weights) of a row as loaded (linear_q8dot_blocks32.wgsl:
//   the weight library's w_raw), and
//   q8_block(raw, x_lo, x_hi, sum_q) -> f32: Σ w·q_x over that block (w as the weight library
//   decodes it) from integer sums of q_w·q_x and the block's Σ q_x.

// This invocation's partial dot products for rows row0..row0+ROW_BLOCK−1 against the staged
// tokens, index i·TOKENS + t, and with NORM_INPUT its partial Σx² of each token at
// ROW_BLOCK·TOKENS + t, over blocks lane, lane + stride, … (consecutive lanes on consecutive
// blocks: coalesced loads). Rows past `last` (the matrix's last row) are clamped to it (never stored).
// Per block: Σ w·x ≈ d_x · q8_block (the format part's: Σ w·q_x from the integer Σ q_w·q_x and Σ q_x).
// Called through partial_dots (linear_q8dot_dots.wgsl, or linear_q8dot_pair_dots.wgsl for two matrices).
fn q8_partials(row0: u32, lane: u32, stride: u32, last: u32) -> array<f32, MAX_PARTIALS> {
  var acc = array<f32, MAX_PARTIALS>();
  let blocks = params.cols / 32u;
  for (var c = lane; c < blocks; c += stride) {
    var xq: array<array<vec4<u32>, 2>, MAX_TOKENS>;
    var xb: array<XBlock, MAX_TOKENS>;
    for (var t = 0u; t < TOKENS; t++) {
      let b = t * blocks + c;
      xq[t] = array<vec4<u32>, 2>(x_quants[2u * b], x_quants[2u * b + 1u]);
      xb[t] = x_blocks[b];
      if (NORM_INPUT) { acc[ROW_BLOCK * TOKENS + t] += xb[t].sum_sq; }
    }
    for (var i = 0u; i < ROW_BLOCK; i++) {
      let raw = q8_raw(min(row0 + i, last), c);
      for (var t = 0u; t < TOKENS; t++) {
        acc[i * TOKENS + t] = fma(xb[t].d, q8_block(raw, xq[t][0], xq[t][1], xb[t].sum_q), acc[i * TOKENS + t]);
      }
    }
  }
  return acc;
}
