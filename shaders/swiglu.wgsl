// SwiGLU gate: silu(gate) · up, elementwise over n = rows · hiddenDim values (grid-stride, so any
// n and any grid work). `main` writes out; `in_place` overwrites gate (WebGPU forbids binding one
// buffer as both). silu(g) = g / (1 + exp(−g)); for very negative g exp overflows to +inf and the
// quotient is −0, the right limit.

struct Params {
  n: u32,          // elements
  stride: u32,     // invocations in the grid
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> gate: array<f32>;   // (R, hiddenDim); in_place: the result
@group(0) @binding(1) var<storage, read> up: array<f32>;           // (R, hiddenDim)
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // main only: (R, hiddenDim)

override WG_SIZE: u32 = 256;

fn gated(i: u32) -> f32 {
  let g = gate[i];
  return g / (1.0 + exp(-g)) * up[i];
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = gid.x + gid.y * nwg.x * WG_SIZE; i < params.n; i += params.stride) {
    out[i] = gated(i);
  }
}

@compute @workgroup_size(WG_SIZE)
fn in_place(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = gid.x + gid.y * nwg.x * WG_SIZE; i < params.n; i += params.stride) {
    gate[i] = gated(i);
  }
}
