// Tiled matmul, f32 tiles and f32 FMAs. Joined with matmul_tiled_core.wgsl, linear_io.wgsl and a
// weights_*.wgsl.

var<workgroup> xs: array<vec4<f32>, TILE_K * TILE_M / 4u>;   // (TILE_K, TILE_M/4): 4 consecutive rows of X
var<workgroup> ws: array<vec4<f32>, TILE_K * TILE_N / 4u>;   // (TILE_K, TILE_N/4): 4 consecutive rows of W

// x = X[m, k..k+3]: component j goes to slab row k + j.
fn put_x(k: u32, m: u32, x: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { xs[(k + j) * (TILE_M / 4u) + m / 4u][m % 4u] = x[j]; }
}

fn put_w(k: u32, n: u32, w: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { ws[(k + j) * (TILE_N / 4u) + n / 4u][n % 4u] = w[j]; }
}

@compute @workgroup_size(TILE_N / 4u, TILE_M / 4u)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let m0 = wid.y * TILE_M;
  let n0 = wid.x * TILE_N;
  let t = lid.y * (TILE_N / 4u) + lid.x;
  var acc = array<vec4<f32>, 4>();
  for (var k0 = 0u; k0 < params.cols; k0 += TILE_K) {
    stage_tiles(m0, n0, k0, t, TILE_M * TILE_N / 16u);
    workgroupBarrier();
    for (var k = 0u; k < TILE_K; k++) {
      let x = xs[k * (TILE_M / 4u) + lid.y];
      let w = ws[k * (TILE_N / 4u) + lid.x];
      for (var i = 0u; i < 4u; i++) { acc[i] = fma(vec4<f32>(x[i]), w, acc[i]); }
    }
    workgroupBarrier();
  }
  store_tile(m0 + 4u * lid.y, n0 + 4u * lid.x, acc);
}
