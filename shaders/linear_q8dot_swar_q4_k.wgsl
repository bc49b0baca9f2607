// q4_k for linear_q8dot_swar.wgsl (products: linear_q8dot_swar_nibbles.wgsl): super-blocks of
// 9 vec4s, the 16-byte header (f16 d, f16 dmin, 6-bit scales and mins) then 8 sub-blocks of 16 bytes
// of nibbles (weights_q4_k.wgsl); a sub-block is q·(d·sc) − dmin·m, the mins applied through Σ q_x.
// Columns come in multiples of 256, so every row's sub-blocks come in groups of 8 with their scales
// in one vector, the header.

const SWAR_GROUPS_OF_8 = true;

// A row's first super-block header.
fn swar_row_base(row: u32) -> u32 {
  return 9u * row * (params.cols / 256u);
}

fn swar_quants(base: u32, c: u32) -> vec4<u32> {
  return W[base + 9u * (c / 8u) + 1u + c % 8u];
}

// The header of the super-block holding sub-blocks c8..c8+7.
fn swar_group(base: u32, c8: u32) -> vec4<u32> {
  return W[base + 9u * (c8 / 8u)];
}

// (d·sc, −dmin·m) of sub-block j (0..7).
fn swar_scale(group: vec4<u32>, j: u32) -> vec2<f32> {
  return k_scale_bias(group, j);
}

// One block's (scale, bias) for rows whose blocks do not come in groups of 8: never called for q4_k
// (SWAR_GROUPS_OF_8), but the body's other branch names it.
fn swar_block_scale(base: u32, c: u32) -> vec2<f32> {
  return k_scale_bias(swar_group(base, c - c % 8u), c % 8u);
}

// The sub-block's Σ w·q_x: d·sc · Σ q·q_x − dmin·m · Σ q_x.
fn swar_term(sb: vec2<f32>, s: i32, sum_q: i32) -> f32 {
  return fma(sb.x, f32(s), sb.y * f32(sum_q));
}
