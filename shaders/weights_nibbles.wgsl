// Shared decoding for the nibble formats (q4_1, q5_0, q5_1, q4_k, q5_k): a 32-weight chunk of
// 16 bytes in which byte j holds weight j in its low nibble and weight j + 16 in its high
// nibble, plus (5-bit formats) a u32 whose bit j is the fifth bit of weight j.

// Low four bits of weights 4v..4v+3: word v & 3 holds weights 4(v&3).. in its low nibbles and
// 16 + 4(v&3).. in its high nibbles, so v < 4 reads low nibbles and v ≥ 4 high ones.
fn nibbles32(q: vec4<u32>, v: u32) -> vec4<u32> {
  let shift = vec4<u32>(0u, 8u, 16u, 24u) + select(0u, 4u, v >= 4u);
  return (vec4<u32>(q[v & 3u]) >> shift) & vec4<u32>(15u);
}

// Fifth bits of weights 4v..4v+3, already shifted to bit 4.
fn fifth_bits(qh: u32, v: u32) -> vec4<u32> {
  return ((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + 4u * v)) & vec4<u32>(1u)) << vec4<u32>(4u);
}
