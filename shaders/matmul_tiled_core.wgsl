// Tiled matmul Y = X · Wᵀ for prefill (many rows of X): the compute-bound shape. A workgroup
// computes a TILE_M × TILE_N tile of Y from TILE_K-wide slabs of X and of dequantized W staged in
// workgroup memory; each invocation owns a 4 × 4 register tile. The variant chooses the precision:
// it declares the slabs and provides put_x/put_w (stage 4 values) and slab_product (accumulate
// one staged slab into the register tile). Bounds are checked, so any tokens and rows work.
// Joined after a variant (matmul_tiled.wgsl, matmul_tiled_f16.wgsl) with linear_io.wgsl and a
// weights_*.wgsl. FLOPs = 2·tokens·rows·cols.

override TILE_M: u32 = 64;   // rows of X (tokens) per workgroup, a multiple of 4
override TILE_N: u32 = 64;   // weight rows (output features) per workgroup, a multiple of 4
const TILE_K = 32u;          // input features per slab: a whole number of chunks (4·CHUNK_VECS = 4, 16 or 32)

// Stage input features k0..k0+TILE_K of X rows m0.. and W rows n0.. (zeros past the edges).
fn stage_tiles(m0: u32, n0: u32, k0: u32, t: u32, threads: u32) {
  let x_stride = params.cols / 4u;
  for (var e = t; e < TILE_M * (TILE_K / 4u); e += threads) {
    let mm = e / (TILE_K / 4u);
    let k4 = e % (TILE_K / 4u);
    var x = vec4<f32>(0.0);
    if (m0 + mm < params.tokens && k0 / 4u + k4 < x_stride) { x = product_input(X[(m0 + mm) * x_stride + k0 / 4u + k4] * x_gain(k0 / 4u + k4)); }
    put_x(4u * k4, mm, x);
  }
  let chunk_elems = 4u * CHUNK_VECS;
  let chunks = params.cols / chunk_elems;
  let per_row = TILE_K / chunk_elems;
  for (var e = t; e < TILE_N * per_row; e += threads) {
    let nn = e / per_row;
    let cc = e % per_row;
    let c = k0 / chunk_elems + cc;
    if (n0 + nn < params.rows && c < chunks) {
      let raw = w_raw(n0 + nn, c);
      for (var v = 0u; v < CHUNK_VECS; v++) { put_w(cc * chunk_elems + 4u * v, nn, w_dequant(raw, v)); }
    } else {
      for (var v = 0u; v < CHUNK_VECS; v++) { put_w(cc * chunk_elems + 4u * v, nn, vec4<f32>(0.0)); }
    }
  }
}

var<workgroup> row_scale: array<f32, TILE_M>;   // NORM_INPUT: 1/rms of the tile's rows of X

// NORM_INPUT prologue: 1/rms of X rows m0.. (one invocation per row; X is re-read, but that is
// TILE_M·cols loads against the tile's TILE_M·TILE_N·cols FMAs).
fn norm_rows(m0: u32, t: u32, threads: u32) {
  let x_stride = params.cols / 4u;
  for (var mm = t; mm < TILE_M; mm += threads) {
    var sum_sq = 0.0;
    if (m0 + mm < params.tokens) {
      for (var k = 0u; k < x_stride; k++) {
        let x = X[(m0 + mm) * x_stride + k];
        sum_sq += dot(x, x);
      }
    }
    row_scale[mm] = input_scale(sum_sq);
  }
}

// Y rows m..m+3, features n..n+3 from a register tile (acc[i][j] = Y[m + i, n + j]).
// Row pairs (n, n+1), (n+2, n+3) of a token are stored back to back (GATED, linear_io.wgsl).
fn store_tile(m0: u32, m: u32, n: u32, acc: array<vec4<f32>, 4>) {
  for (var i = 0u; i < 4u; i++) {
    if (m + i >= params.tokens) { break; }
    var scale = 1.0;
    if (NORM_INPUT) { scale = row_scale[m + i - m0]; }
    for (var j = 0u; j < 4u; j++) {
      if (n + j < params.rows) { store(m + i, n + j, acc[i][j] * scale); }
    }
  }
}

@compute @workgroup_size(TILE_N / 4u, TILE_M / 4u)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let m0 = wid.y * TILE_M;
  let n0 = wid.x * TILE_N;
  let t = lid.y * (TILE_N / 4u) + lid.x;
  var acc = array<vec4<f32>, 4>();
  if (NORM_INPUT) { norm_rows(m0, t, TILE_M * TILE_N / 16u); }
  for (var k0 = 0u; k0 < params.cols; k0 += TILE_K) {
    stage_tiles(m0, n0, k0, t, TILE_M * TILE_N / 16u);
    workgroupBarrier();
    slab_product(&acc, lid.y, lid.x);
    workgroupBarrier();
  }
  store_tile(m0, m0 + 4u * lid.y, n0 + 4u * lid.x, acc);
}
