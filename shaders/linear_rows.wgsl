// Linear layer with invocations over output features (weight rows): the CPU-adapter shape, for
// decode and prefill alike. A CPU adapter (lavapipe, SwiftShader) runs a subgroup as one SIMD
// register, one lane per invocation, with 16 such registers (AVX2). Every storage load whose
// index is not a compile-time constant costs several vec4 FMAs there (measured on lavapipe), so
// each invocation owns a ROW_BLOCK × TOKENS register tile: each chunk of its ROW_BLOCK weight
// rows is loaded and dequantized once for TOKENS rows of X, and each X vector is loaded once for
// the ROW_BLOCK weight rows. The tile stays small (≤ 16 accumulators) so it fits the registers;
// the loops have constant trip counts, so they unroll and the arrays become registers.
// No reduction and no barrier. A GPU wants consecutive lanes on consecutive weights instead:
// matvec*.wgsl, matmul_tiled*.wgsl. Joined with linear_io.wgsl and a weights_*.wgsl (w_raw,
// w_dequant). FLOPs = 2·tokens·rows·cols.

override LANES: u32 = 8;       // invocations per workgroup
override ROW_BLOCK: u32 = 4;   // weight rows per invocation (≤ MAX_ROW_BLOCK)
override TOKENS: u32 = 4;      // rows of X per invocation (≤ MAX_TOKENS); grid z covers the rest

const MAX_ROW_BLOCK = 8u;
const MAX_TOKENS = 8u;
const MAX_TILE = 16u;          // ROW_BLOCK · TOKENS

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let row0 = ((wid.x + wid.y * nwg.x) * LANES + lane) * ROW_BLOCK;
  let t0 = wid.z * TOKENS;
  // Rows past the shard and tokens past the step repeat the last one (never stored), so every
  // loop below has a constant trip count.
  let last_row = params.rows - 1u;
  let last_t = params.tokens - 1u;
  let x_stride = params.cols / 4u;
  let chunks = params.cols / (4u * CHUNK_VECS);
  var acc = array<f32, MAX_TILE>();   // (ROW_BLOCK, TOKENS)
  var sum_sq = array<f32, MAX_TOKENS>();   // NORM_INPUT: Σx² of each token's raw input
  for (var c = 0u; c < chunks; c++) {
    var raw: array<WRaw, MAX_ROW_BLOCK>;
    for (var i = 0u; i < ROW_BLOCK; i++) { raw[i] = w_raw(min(row0 + i, last_row), c); }
    for (var v = 0u; v < CHUNK_VECS; v++) {
      var w: array<vec4<f32>, MAX_ROW_BLOCK>;
      for (var i = 0u; i < ROW_BLOCK; i++) { w[i] = w_dequant(raw[i], v); }
      let k4 = c * CHUNK_VECS + v;
      for (var t = 0u; t < TOKENS; t++) {
        let raw_x = X[min(t0 + t, last_t) * x_stride + k4];
        if (NORM_INPUT) { sum_sq[t] += dot(raw_x, raw_x); }
        let x = product_input(raw_x * x_gain(k4));
        for (var i = 0u; i < ROW_BLOCK; i++) { acc[i * TOKENS + t] += dot(w[i], x); }
      }
    }
  }
  // GATED pairs (2j, 2j+1) are rows of one invocation (select.ts keeps ROW_BLOCK even for them),
  // stored gate first for every token, then up.
  for (var i = 0u; i < ROW_BLOCK; i++) {
    if (row0 + i >= params.rows) { break; }
    for (var t = 0u; t < TOKENS; t++) {
      if (t0 + t < params.tokens) { store(t0 + t, row0 + i, acc[i * TOKENS + t] * input_scale(sum_sq[t])); }
    }
  }
}
