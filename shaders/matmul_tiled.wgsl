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

// acc[i] += X rows 4·ty + i times W rows 4·tx..4·tx+3, over the staged slab.
fn slab_product(acc: ptr<function, array<vec4<f32>, 4>>, ty: u32, tx: u32) {
  for (var k = 0u; k < TILE_K; k++) {
    let x = xs[k * (TILE_M / 4u) + ty];
    let w = ws[k * (TILE_N / 4u) + tx];
    for (var i = 0u; i < 4u; i++) { (*acc)[i] = fma(vec4<f32>(x[i]), w, (*acc)[i]); }
  }
}
