// The 6-bit sub-block scales and mins of q4_k and q5_k, from a super-block's 16-byte header:
// x = f16 d | f16 dmin << 16, then 12 bytes packing sc[8], m[8] (ggml's get_scale_min_k4):
// s < 4: sc = b[s] & 63, m = b[s+4] & 63; s ≥ 4: sc = b[s+4] & 15 | (b[s−4] >> 6) << 4,
// m = b[s+4] >> 4 | (b[s] >> 6) << 4.

// (scale, bias) of sub-block s: (d·sc, −dmin·m). Bytes j, j + 4, j + 8 (j = s & 3) sit at the same
// shift in words y, z, w, so no word is chosen at run time and no branch is taken (cheap to compile
// when the matvec unrolls it per row).
fn k_scale_bias(h: vec4<u32>, s: u32) -> vec2<f32> {
  let bytes = (h.yzw >> vec3<u32>(8u * (s & 3u))) & vec3<u32>(0xffu);   // b[j], b[j+4], b[j+8]
  let high = s >= 4u;
  let sc = select(bytes.x & 63u, (bytes.z & 15u) | ((bytes.x >> 6u) << 4u), high);
  let m = select(bytes.y & 63u, (bytes.z >> 4u) | ((bytes.y >> 6u) << 4u), high);
  let dd = unpack2x16float(h.x);
  return vec2<f32>(dd.x * f32(sc), -(dd.y * f32(m)));
}
