// Compute roof (f32): each invocation runs CHAINS independent vec4 FMA chains for `iterations`
// steps of x = x * m + c. With |m| < 1 every chain converges to c / (1 - m), which the CPU checks.
// FLOPs = invocations * iterations * CHAINS * 4 lanes * 2.

struct Params {
  iterations: u32,
  _pad0: u32,
  m: f32,          // multiplier, |m| < 1
  _pad1: f32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;   // (invocations)
@group(0) @binding(1) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let linear = gid.x + gid.y * nwg.x * WG_SIZE;
  let c = vec4<f32>(f32(linear % 16u) * 0.0625, 0.25, 0.5, 0.75);
  let m = vec4<f32>(params.m);
  var x0 = c; var x1 = c * 0.5; var x2 = c * 0.25; var x3 = c * 0.125;
  var x4 = -c; var x5 = c + 1.0; var x6 = c - 1.0; var x7 = c * 2.0;
  for (var i = 0u; i < params.iterations; i++) {
    x0 = fma(x0, m, c); x1 = fma(x1, m, c); x2 = fma(x2, m, c); x3 = fma(x3, m, c);
    x4 = fma(x4, m, c); x5 = fma(x5, m, c); x6 = fma(x6, m, c); x7 = fma(x7, m, c);
  }
  out[linear] = (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) * 0.125;
}
