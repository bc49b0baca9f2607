// The 6-bit sub-block scales and mins of q4_k and q5_k, from a super-block's 16-byte header:
// x = f16 d | f16 dmin << 16, then 12 bytes packing sc[8], m[8] (ggml's get_scale_min_k4):
// s < 4: sc = b[s] & 63, m = b[s+4] & 63; s ≥ 4: sc = b[s+4] & 15 | (b[s−4] >> 6) << 4,
// m = b[s+4] >> 4 | (b[s] >> 6) << 4.

fn k_scale_byte(h: vec4<u32>, i: u32) -> u32 {
  let word = select(select(h.y, h.z, i >= 4u), h.w, i >= 8u);
  return (word >> (8u * (i & 3u))) & 0xffu;
}

// (scale, bias) of sub-block s: (d·sc, −dmin·m).
fn k_scale_bias(h: vec4<u32>, s: u32) -> vec2<f32> {
  var sc: u32;
  var m: u32;
  if (s < 4u) {
    sc = k_scale_byte(h, s) & 63u;
    m = k_scale_byte(h, s + 4u) & 63u;
  } else {
    sc = (k_scale_byte(h, s + 4u) & 15u) | ((k_scale_byte(h, s - 4u) >> 6u) << 4u);
    m = (k_scale_byte(h, s + 4u) >> 4u) | ((k_scale_byte(h, s) >> 6u) << 4u);
  }
  let dd = unpack2x16float(h.x);
  return vec2<f32>(dd.x * f32(sc), -(dd.y * f32(m)));
}
