// q4_0 for linear_q8dot_swar.wgsl (products: linear_q8dot_swar_nibbles.wgsl): blocks of 16 bytes
// of nibbles, then the f16 scales two per word from params.scale_base (weights_q4_0.wgsl,
// weights_scales.wgsl); value = (q − 8)·d, the −8 offset applied through Σ q_x as in
// linear_q8dot_q4_0.wgsl. A row's scales come as one vector per 8 blocks where its blocks come in
// multiples of 8 (the scale region is 4-word aligned: it follows the 4-word blocks), else one by one.

const Q8_OFFSET = -8;
const SWAR_GROUPS_OF_8 = false;   // only where blocks % 8 == 0 (the body checks)

// A row's first block.
fn swar_row_base(row: u32) -> u32 {
  return row * (params.cols / 32u);
}

fn swar_quants(base: u32, c: u32) -> vec4<u32> {
  return W[base + c];
}

// The f16 scales of blocks c8..c8+7 (c8 a multiple of 8), two per word, block 2i low.
fn swar_group(base: u32, c8: u32) -> vec4<u32> {
  return W[(params.scale_base + (base + c8) / 2u) / 4u];
}

// (d, unused) of block j (0..7) of a group.
fn swar_scale(group: vec4<u32>, j: u32) -> vec2<f32> {
  let word = select(select(group.x, group.y, (j & 2u) != 0u), select(group.z, group.w, (j & 2u) != 0u), j >= 4u);
  let pair = unpack2x16float(word);
  return vec2<f32>(select(pair.x, pair.y, (j & 1u) == 1u), 0.0);
}

fn swar_block_scale(base: u32, c: u32) -> vec2<f32> {
  return vec2<f32>(block_scale(base + c), 0.0);
}

// The block's Σ w·q_x: d · (Σ q·q_x − 8·Σ q_x), exact in i32 before the scale.
fn swar_term(sb: vec2<f32>, s: i32, sum_q: i32) -> f32 {
  return sb.x * f32(s + Q8_OFFSET * sum_q);
}
