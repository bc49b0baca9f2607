// q6_k for linear_q8dot_partials.wgsl: a block of 32 weights is two of q6_k's 16-weight sub-blocks
// (weights_q6_k.wgsl: per super-block 16 × 2 words of nibbles, byte k holding weight k low and
// k + 8 high; 16 words of high bit pairs, bits 2k..2k+1 of word s for weight k of sub-block s; 16
// int8 scales; the f16 d's in the scale region), each (q − 32)·(d·sc) with q in 0..63. Each 4
// weights become one word of signed bytes q − 32 for dot4I8Packed: the nibbles, the bit pairs
// spread to bits 4–5 of each byte, then q − 32 as a byte: q ^ 0x20, with bits 6–7 set where q < 32.

const Q6_NIBBLES = 0x0F0F0F0Fu;

struct Q8Raw {
  ql: vec4<u32>,   // sub-block 2(c%8): x, y; the next: z, w
  qh: vec2<u32>,   // their high bit pairs
  sc: vec2<f32>,   // their d·sc
}

fn q8_raw(row: u32, c: u32) -> Q8Raw {
  let block = row * (params.cols / 256u) + c / 8u;
  let s0 = 2u * (c % 8u);
  let at = 52u * block;
  // s0 is even, so both sub-blocks' scales sit in one word, at bytes s0 % 4 and s0 % 4 + 1.
  let scales = W[at + 48u + s0 / 4u];
  let shift = 8u * (s0 % 4u);
  let d = block_scale(block);
  return Q8Raw(vec4<u32>(W[at + 2u * s0], W[at + 2u * s0 + 1u], W[at + 2u * s0 + 2u], W[at + 2u * s0 + 3u]),
               vec2<u32>(W[at + 32u + s0], W[at + 33u + s0]),
               d * vec2<f32>(f32(bitcast<i32>(scales << (24u - shift)) >> 24u), f32(bitcast<i32>(scales << (16u - shift)) >> 24u)));
}

// Four weights as signed bytes q − 32: `low` their nibbles (one per byte), `pairs` their 4 high bit
// pairs in bits 0..7.
fn q6_word(low: u32, pairs: u32) -> u32 {
  let spread = (pairs & 3u) | ((pairs & 0xCu) << 6u) | ((pairs & 0x30u) << 12u) | ((pairs & 0xC0u) << 18u);
  let q = low | (spread << 4u);
  let below = ~q & 0x20202020u;   // bit 5 clear: q < 32
  return (q ^ 0x20202020u) | (below << 1u) | (below << 2u);
}

// Σ (q − 32)·q_x over one 16-weight sub-block (nibble words w0, w1, bit pairs h) against X words x.
fn q6_dot(w0: u32, w1: u32, h: u32, x: vec4<u32>) -> i32 {
  return dot4I8Packed(q6_word(w0 & Q6_NIBBLES, h & 0xFFu), x.x) + dot4I8Packed(q6_word(w1 & Q6_NIBBLES, (h >> 8u) & 0xFFu), x.y)
       + dot4I8Packed(q6_word((w0 >> 4u) & Q6_NIBBLES, (h >> 16u) & 0xFFu), x.z) + dot4I8Packed(q6_word((w1 >> 4u) & Q6_NIBBLES, h >> 24u), x.w);
}

// Σ w·q_x over the block: each sub-block's d·sc times its integer sum (x_lo: elements 0..15, x_hi 16..31).
fn q8_block(raw: Q8Raw, x_lo: vec4<u32>, x_hi: vec4<u32>, sum_q: i32) -> f32 {
  return fma(raw.sc.x, f32(q6_dot(raw.ql.x, raw.ql.y, raw.qh.x, x_lo)), raw.sc.y * f32(q6_dot(raw.ql.z, raw.ql.w, raw.qh.y, x_hi)));
}
