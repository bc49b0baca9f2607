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

@compute @workgroup_size(TILE_N / 4u, TILE_M / 4u)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let m0 = wid.y * TILE_M;
  let n0 = wid.x * TILE_N;
  let t = lid.y * (TILE_N / 4u) + lid.x;
  var acc = array<vec4<f32>, 4>();
  for (var k0 = 0u; k0 < params.cols; k0 += TILE_K) {
    stage_tiles(m0, n0, k0, t, TILE_M * TILE_N / 16u);
    workgroupBarrier();
    for (var k8 = 0u; k8 < TILE_K; k8 += 8u) {
      var part = array<vec4<f16>, 4>();   // an explicit initializer: a loop-local var is not re-zeroed on lavapipe
      for (var k = k8; k < k8 + 8u; k++) {
        let x = xs[k * (TILE_M / 4u) + lid.y];
        let w = ws[k * (TILE_N / 4u) + lid.x];
        for (var i = 0u; i < 4u; i++) { part[i] = fma(vec4<f16>(x[i]), w, part[i]); }
      }
      for (var i = 0u; i < 4u; i++) { acc[i] += vec4<f32>(part[i]); }
    }
    workgroupBarrier();
  }
  store_tile(m0 + 4u * lid.y, n0 + 4u * lid.x, acc);
}
