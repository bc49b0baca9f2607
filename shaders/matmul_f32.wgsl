// Tiled f32 matmul, Y = X · Wᵀ — the prefill shape: X is (M tokens × K), W is (N × K) row-major
// as GGUF stores weights, Y is (M × N). Each workgroup computes a TILE_M × TILE_N tile of Y from
// TILE_K-wide slabs staged in workgroup memory; each invocation owns a 4 × 4 register tile.
// Bounds are checked, so any M, N, K works. FLOPs = 2·M·N·K.

struct Params {
  M: u32,
  N: u32,
  K: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> X: array<f32>;             // (M, K)
@group(0) @binding(1) var<storage, read> W: array<f32>;             // (N, K)
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;       // (M, N)
@group(0) @binding(3) var<uniform> params: Params;

override TILE_M: u32 = 64;
override TILE_N: u32 = 64;
override TILE_K: u32 = 16;
override WG_X: u32 = TILE_N / 4u;   // invocations along N
override WG_Y: u32 = TILE_M / 4u;   // invocations along M

var<workgroup> xs: array<f32, TILE_K * TILE_M>;   // (TILE_K, TILE_M): k-major so a row of 4 m's is contiguous
var<workgroup> ws: array<f32, TILE_K * TILE_N>;   // (TILE_K, TILE_N)

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let m0 = wid.y * TILE_M;
  let n0 = wid.x * TILE_N;
  let threads = WG_X * WG_Y;
  let t = lid.y * WG_X + lid.x;
  var acc: array<vec4<f32>, 4>;
  for (var i = 0u; i < 4u; i++) { acc[i] = vec4<f32>(0.0); }

  for (var k0 = 0u; k0 < params.K; k0 += TILE_K) {
    for (var e = t; e < TILE_M * TILE_K; e += threads) {
      let mm = e / TILE_K;
      let kk = e % TILE_K;
      let gm = m0 + mm;
      let gk = k0 + kk;
      var v = 0.0;
      if (gm < params.M && gk < params.K) { v = X[gm * params.K + gk]; }
      xs[kk * TILE_M + mm] = v;
    }
    for (var e = t; e < TILE_N * TILE_K; e += threads) {
      let nn = e / TILE_K;
      let kk = e % TILE_K;
      let gn = n0 + nn;
      let gk = k0 + kk;
      var v = 0.0;
      if (gn < params.N && gk < params.K) { v = W[gn * params.K + gk]; }
      ws[kk * TILE_N + nn] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TILE_K; kk++) {
      let xb = kk * TILE_M + lid.y * 4u;
      let wb = kk * TILE_N + lid.x * 4u;
      let w = vec4<f32>(ws[wb], ws[wb + 1u], ws[wb + 2u], ws[wb + 3u]);
      acc[0] = fma(vec4<f32>(xs[xb]), w, acc[0]);
      acc[1] = fma(vec4<f32>(xs[xb + 1u]), w, acc[1]);
      acc[2] = fma(vec4<f32>(xs[xb + 2u]), w, acc[2]);
      acc[3] = fma(vec4<f32>(xs[xb + 3u]), w, acc[3]);
    }
    workgroupBarrier();
  }

  for (var i = 0u; i < 4u; i++) {
    let gm = m0 + lid.y * 4u + i;
    if (gm >= params.M) { continue; }
    for (var j = 0u; j < 4u; j++) {
      let gn = n0 + lid.x * 4u + j;
      if (gn < params.N) { Y[gm * params.N + gn] = acc[i][j]; }
    }
  }
}
