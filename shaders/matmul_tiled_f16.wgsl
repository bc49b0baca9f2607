enable f16;

// Tiled matmul with f16 tiles and f16 products, accumulated in f32: each run of 8 products is
// summed in f16, then added to the f32 accumulator (the error stays near f16's 2^-11 per
// element; activations must stay well inside f16's ±65504). Halves the workgroup memory and its
// traffic. Same binding contract as matmul_tiled.wgsl; joined with matmul_tiled_core.wgsl,
// linear_io.wgsl and a weights_*.wgsl.

var<workgroup> xs: array<vec4<f16>, TILE_K * TILE_M / 4u>;   // (TILE_K, TILE_M/4): 4 consecutive rows of X
var<workgroup> ws: array<vec4<f16>, TILE_K * TILE_N / 4u>;   // (TILE_K, TILE_N/4): 4 consecutive rows of W

fn put_x(k: u32, m: u32, x: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { xs[(k + j) * (TILE_M / 4u) + m / 4u][m % 4u] = f16(x[j]); }
}

fn put_w(k: u32, n: u32, w: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { ws[(k + j) * (TILE_N / 4u) + n / 4u][n % 4u] = f16(w[j]); }
}

// acc[i] += X rows 4·ty + i times W rows 4·tx..4·tx+3, over the staged slab, in runs of 8 f16 products.
fn slab_product(acc: ptr<function, array<vec4<f32>, 4>>, ty: u32, tx: u32) {
  for (var k8 = 0u; k8 < TILE_K; k8 += 8u) {
    var part = array<vec4<f16>, 4>();   // an explicit initializer: a loop-local var is not re-zeroed on lavapipe
    for (var k = k8; k < k8 + 8u; k++) {
      let x = xs[k * (TILE_M / 4u) + ty];
      let w = ws[k * (TILE_N / 4u) + tx];
      for (var i = 0u; i < 4u; i++) { part[i] = fma(vec4<f16>(x[i]), w, part[i]); }
    }
    for (var i = 0u; i < 4u; i++) { (*acc)[i] += vec4<f32>(part[i]); }
  }
}
