// The SWAR block products of linear_q8dot_swar.wgsl for the nibble formats (q4_0, q4_k's
// sub-blocks: 16 bytes per 32 weights, byte j holding weight j in its low nibble and j + 16 in its
// high one): Σ q_w·q_x of one block with two 4×8-bit products per u32 multiply instead of
// dot4I8Packed, for CPU adapters, where dot4I8Packed has no instruction and becomes byte extracts,
// multiplies and adds (lavapipe). Same sums, exactly: integer arithmetic.
// (q_a + q_b·2¹⁶)·(x_b + x_a·2¹⁶) mod 2³² holds q_a·x_a + q_b·x_b in its high 16 bits (q_a·x_b in
// the low ones; q_b·x_a·2³² falls off); 8 products accumulate before the high half is taken. With x
// in [−127, 127] and q in [0, 15], 8 products' high fields sum to |H| ≤ 30,480 and low fields to
// |L| ≤ 15,240 < 2¹⁵, so the true sum L + H·2¹⁶ fits an i32 and (S + 2¹⁵) >> 16 (arithmetic) is H.
// Weight word k holds elements 4k..4k+3 in its low nibbles and 16+4k..16+4k+3 in its high ones.

const PAIR_MASK = 0x000F000Fu;   // nibbles of bytes 0 and 2 (shifted: 1 and 3; +4: the high nibbles)

// The SWAR pairs of a staged X word (int8 x0..x3 in bytes 0..3): even x2 + x0·2¹⁶, odd x3 + x1·2¹⁶.
fn x_pairs(word: u32) -> vec2<u32> {
  let x = bitcast<i32>(word);
  let even = extractBits(x, 16u, 8u) + (extractBits(x, 0u, 8u) << 16u);
  let odd = extractBits(x, 24u, 8u) + (extractBits(x, 8u, 8u) << 16u);
  return bitcast<vec2<u32>>(vec2<i32>(even, odd));
}

fn high16(s: u32) -> i32 {
  return (bitcast<i32>(s) + 0x8000) >> 16u;
}

// The four masked pairs of weight word w against staged X words lo (its low nibbles' elements) and
// hi (its high nibbles'), each as its (even, odd) pairs.
fn word_products(w: u32, lo: vec2<u32>, hi: vec2<u32>) -> u32 {
  return (w & PAIR_MASK) * lo.x + ((w >> 8u) & PAIR_MASK) * lo.y + ((w >> 4u) & PAIR_MASK) * hi.x + ((w >> 12u) & PAIR_MASK) * hi.y;
}

// Σ q·q_x over one block (word k: elements 4k..4k+3 low, 16+4k..16+4k+3 high) against the
// block's 8 staged words' pairs.
fn swar_dot(w: vec4<u32>, x: array<vec2<u32>, 8>) -> i32 {
  let s01 = word_products(w.x, x[0], x[4]) + word_products(w.y, x[1], x[5]);
  let s23 = word_products(w.z, x[2], x[6]) + word_products(w.w, x[3], x[7]);
  return high16(s01) + high16(s23);
}
