// RoPE's angle → (cos, sin), shared by rope_store.wgsl and the fused decode attention
// (attention_decode_rope_io.wgsl). Built-in cos/sin are only specified to 2^-11 inside [−π, π]
// and not at all beyond (angles reach thousands of radians), so cosSin reduces the angle by π/2
// itself and evaluates cephes' minimax polynomials: ~1e-7 absolute for |angle| < 10^5.

// π/2 in three parts (cephes sinf); k · PIO2_1 is exact for k < 2^16.
const PIO2_1 = 1.5703125;
const PIO2_2 = 4.837512969970703125e-4;
const PIO2_3 = 7.54978995489188216e-8;
const TWO_OVER_PI = 0.6366197723675814;

// (cos(a), sin(a)) for a ≥ 0.
fn cosSin(a: f32) -> vec2<f32> {
  let k = round(a * TWO_OVER_PI);
  let r = ((a - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;   // |r| ≤ π/4
  let z = r * r;
  let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
  switch (u32(k) & 3u) {
    case 0u: { return vec2<f32>(c, s); }
    case 1u: { return vec2<f32>(-s, c); }
    case 2u: { return vec2<f32>(-c, -s); }
    default: { return vec2<f32>(s, -c); }
  }
}
