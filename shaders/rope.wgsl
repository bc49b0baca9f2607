// Rotary position embedding, in place on q (R, nHeads·headDim) or k (R, nKvHeads·headDim):
// one invocation per (row, head, pair i < ropeDim/2), grid-stride. Pair i of a head is
// (x[2i], x[2i+1]) for NEOX = false (llama.cpp NORM, llama2.c) or (x[i], x[i + ropeDim/2]) for
// NEOX = true (Qwen2); dims ≥ ropeDim are left alone. angle = f32(pos) · freqs[i] is one
// correctly rounded f32 multiply, so it equals the CPU's Math.fround(pos · freq) bit for bit.
// Built-in cos/sin are only specified to 2^-11 inside [−π, π] and not at all beyond (angles
// reach thousands of radians), so cosSin reduces the angle by π/2 itself and evaluates cephes'
// minimax polynomials: ~1e-7 absolute for |angle| < 10^5, the same on every device.

struct Params {
  pairs: u32,      // R · nHeads · ropeDim/2
  stride: u32,     // invocations in the grid
  nHeads: u32,
  headDim: u32,
  half: u32,       // ropeDim / 2
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;      // (R, nHeads·headDim), rotated in place
@group(0) @binding(1) var<storage, read> rows: array<vec2<u32>>;   // (R): (slot, pos)
@group(0) @binding(2) var<storage, read> freqs: array<f32>;        // (ropeDim/2): theta^(−2i/ropeDim)
@group(0) @binding(3) var<uniform> params: Params;

override WG_SIZE: u32 = 256;
override NEOX: bool = false;

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

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var p = gid.x + gid.y * nwg.x * WG_SIZE; p < params.pairs; p += params.stride) {
    let i = p % params.half;
    let head = p / params.half;            // r · nHeads + h
    let r = head / params.nHeads;
    let base = head * params.headDim;
    var a = base + 2u * i;
    var b = a + 1u;
    if (NEOX) {
      a = base + i;
      b = a + params.half;
    }
    let cs = cosSin(f32(rows[r].y) * freqs[i]);
    let x0 = x[a];
    let x1 = x[b];
    x[a] = x0 * cs.x - x1 * cs.y;
    x[b] = x0 * cs.y + x1 * cs.x;
  }
}
