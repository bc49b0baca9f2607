// Multi-row matrix-vector product Y = X · Wᵀ for decode (TOKENS ≤ 8 rows of X, from row token0;
// rows past the last are clamped to it and never stored): the memory-bound shape. Each workgroup owns ROWS_PER_WG output features; its LANES invocations split the input
// features of ROW_BLOCK weight rows at a time, so every weight byte is read once for all TOKENS
// rows of X and every X vector loaded once feeds ROW_BLOCK weight rows. The per-lane partial sums
// are reduced by the variant's main (matvec.wgsl: workgroup memory; matvec_subgroups.wgsl:
// subgroupAdd). Joined with linear_io.wgsl (bindings, store) and a weight-format library
// (weights_*.wgsl: w_raw, w_quants, w_scale, w_bias).
// FLOPs = 2·TOKENS·rows·cols.

override LANES: u32 = 8;         // invocations splitting one row's input features (power of two)
override ROW_BLOCK: u32 = 4;     // weight rows each invocation works on at once (≤ 8)
override ROWS_PER_WG: u32 = 8;   // output features per workgroup, a multiple of ROW_BLOCK
override TOKENS: u32 = 1;        // rows of X and Y (≤ 8)

const MAX_ROW_BLOCK = 8u;
const MAX_TOKENS = 8u;
const MAX_PARTIALS = 72u;            // MAX_ROW_BLOCK · MAX_TOKENS products, then MAX_TOKENS sums of x²

// Kernels reading X from storage stage nothing (linear_q8dot.wgsl's stage_x quantizes it into workgroup memory).
fn stage_x(lane: u32) {}

fn workgroup_row0(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS_PER_WG;
}

// This lane's partial dot products for rows row0..row0+ROW_BLOCK-1, index i·TOKENS + t, and with
// NORM_INPUT its partial Σx² of each token's raw input at ROW_BLOCK·TOKENS + t (see linear_io.wgsl),
// over chunks lane, lane + stride, … (consecutive lanes on consecutive chunks: coalesced loads).
// Rows past the shard are clamped to its last row (their results are never stored). Per chunk,
// Σ w·x = scale·Σ q·x + bias·Σ x (weight = q·scale + bias, per chunk): one FMA pair per row and token.
fn partial_dots(row0: u32, lane: u32, stride: u32) -> array<f32, MAX_PARTIALS> {
  var acc = array<f32, MAX_PARTIALS>();
  let chunks = params.cols / (4u * CHUNK_VECS);
  let x_stride = params.cols / 4u;
  let last = params.rows - 1u;
  for (var c = lane; c < chunks; c += stride) {
    var raw: array<WRaw, MAX_ROW_BLOCK>;
    for (var i = 0u; i < ROW_BLOCK; i++) { raw[i] = w_raw(min(row0 + i, last), c); }
    var qx = array<f32, MAX_PARTIALS>();
    var x_sum = array<f32, MAX_TOKENS>();
    for (var v = 0u; v < CHUNK_VECS; v++) {
      var xv: array<vec4<f32>, MAX_TOKENS>;
      for (var t = 0u; t < TOKENS; t++) {
        let x = X[min(token0 + t, params.tokens - 1u) * x_stride + c * CHUNK_VECS + v];
        if (NORM_INPUT) { acc[ROW_BLOCK * TOKENS + t] += dot(x, x); }
        xv[t] = product_input(x * x_gain(c * CHUNK_VECS + v));
        if (W_HAS_BIAS) { x_sum[t] += dot(xv[t], vec4<f32>(1.0)); }
      }
      for (var i = 0u; i < ROW_BLOCK; i++) {
        let q = w_quants(raw[i], v);
        for (var t = 0u; t < TOKENS; t++) { qx[i * TOKENS + t] += dot(q, xv[t]); }
      }
    }
    for (var i = 0u; i < ROW_BLOCK; i++) {
      let d = w_scale(raw[i]);
      let b = w_bias(raw[i]);
      for (var t = 0u; t < TOKENS; t++) { acc[i * TOKENS + t] += d * qx[i * TOKENS + t] + b * x_sum[t]; }
    }
  }
  return acc;
}
