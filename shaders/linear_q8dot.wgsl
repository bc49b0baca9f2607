// Linear layer with 8-bit activations (TOKENS ≤ 8 rows of X per workgroup: decode, and prefill as
// linear_q8dot_rows.wgsl's grid z over groups of TOKENS rows) for the formats whose blocks of 32
// weights are integers times a scale, plus a bias (q4_0, q8_0, q4_k, q6_k): each workgroup first
// quantizes its rows of X, after the RMSNorm gain, to int8 as llama.cpp quantizes activations for
// those weights (q = round(x · 127/max|x|): Q8_0's scale per 32 inputs for q4_0 and q8_0, Q8_K's per
// 256 for the K-quants; X_GROUP) into workgroup memory; then a block
// of a weight row against a block of X is 8 dot4I8Packed (WGSL language feature
// packed_4x8_integer_dot_product) on packed i8x4 words, one i32 → f32 conversion and an FMA or two
// with the scales — instead of 32 u32 → f32 conversions and 32 FMAs. X is quantized inside the
// matvec (no extra dispatch): every workgroup stages all of its X rows, TOKENS · cols · (11/8 + 1/64)
// bytes of workgroup memory (X_BLOCKS blocks of 32 + 12 bytes, a group maximum per 8 blocks), which
// linear-shapes.ts checks against
// maxComputeWorkgroupStorageSize before choosing this kernel.
//
// The activation rounding adds error: each x is off by ≤ d_x/2 = max|x_group|/254, so a dot
// product's relative error is ~1/254 of the group's largest |x| per element — an NMSE of 1.5e-5 to
// 4.7e-5 for random data (linear-check.ts derives its tolerance from it), below q4_0's own error.
//
// This part is the staging. Joined after a variant that supplies the entry point (matvec_wide.wgsl:
// rows per subgroup with subgroupAdd, the GPUs' shape, which calls stage_x and partial_dots;
// linear_q8dot_rows.wgsl: one invocation per ROW_BLOCK rows, no reduction; both with
// linear_q8dot_partials.wgsl and the format's parts: linear_q8dot_<format>.wgsl's q8_block, and
// linear_q8dot_nibbles.wgsl's q8_dot for the nibble formats; linear_q8dot_swar.wgsl: its own
// products), linear_io.wgsl (bindings, prologue, epilogue) and the format's weight library
// (weights_*.wgsl: W, w_raw, block scales); same binding contract as every linear kernel, and takes
// matvec_core.wgsl's place.
override LANES: u32 = 128;      // invocations per workgroup
override ROW_BLOCK: u32 = 2;    // weight rows a subgroup (wide) or an invocation (rows) works on at once (≤ 8)
override ROWS_PER_WG: u32 = 8;  // wide: output features per workgroup, a multiple of ROW_BLOCK
override TOKENS: u32 = 1;       // rows of X staged and multiplied per workgroup (≤ 8)
override X_BLOCKS: u32 = 64u;   // TOKENS · cols/32: the blocks of X staged (sizes the workgroup arrays)
// Blocks of 32 that share one scale: 1 rounds X as llama.cpp's Q8_0 (its activations for q4_0 and
// q8_0 weights), 8 as its Q8_K (256 per scale: its activations for the K-quants), so the integer
// products are llama.cpp's own. A group never crosses a row: cols is a multiple of 32 · X_GROUP.
override X_GROUP: u32 = 1u;

const MAX_ROW_BLOCK = 8u;
const MAX_TOKENS = 8u;
const MAX_PARTIALS = 72u;       // MAX_ROW_BLOCK · MAX_TOKENS dot products, then MAX_TOKENS sums of x²

// One staged block of X: d_x, the raw Σx² (NORM_INPUT; see linear_io.wgsl) and Σq of its quants
// (q4_0 applies its −8 offset and q4_k its mins through it).
struct XBlock {
  d: f32,
  sum_sq: f32,
  sum_q: i32,
}

var<workgroup> x_quants: array<vec4<u32>, 2u * X_BLOCKS>;   // (TOKENS, cols/32, 2): 16 int8 each, element 4k + j in byte j of word k
var<workgroup> x_blocks: array<XBlock, X_BLOCKS>;          // (TOKENS, cols/32)
var<workgroup> x_group_max: array<atomic<u32>, (X_BLOCKS + 7u) / 8u>;   // (TOKENS, cols/256) when X_GROUP is 8: the group's max |v| as f32 bits (ordered as u32 for v ≥ 0)

fn workgroup_row0(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS_PER_WG;
}

// The wide matvec's staging: X rows token0..token0+TOKENS−1, then a barrier. Call from uniform control flow.
fn stage_x(lane: u32) {
  stage_rows(lane, LANES, token0);
  workgroupBarrier();
}

// Quantize X rows t0..t0+TOKENS−1 (the last row repeated past params.tokens) into workgroup
// memory, the workgroup's `lanes` invocations taking every lanes-th block. Call from uniform
// control flow; a workgroupBarrier must follow before the blocks are read.
fn stage_rows(lane: u32, lanes: u32, t0: u32) {
  let blocks = params.cols / 32u;
  let x_stride = params.cols / 4u;
  if (X_GROUP > 1u) {
    // Q8_K: every block's largest |v| into its group's maximum first (workgroup memory starts at 0).
    for (var b = lane; b < TOKENS * blocks; b += lanes) {
      let row = min(t0 + b / blocks, params.tokens - 1u);
      let c = b % blocks;
      var amax = vec4<f32>(0.0);
      for (var k = 0u; k < 8u; k++) {
        amax = max(amax, abs(X[row * x_stride + 8u * c + k] * x_gain(8u * c + k)));
      }
      atomicMax(&x_group_max[b / X_GROUP], bitcast<u32>(max(max(amax.x, amax.y), max(amax.z, amax.w))));
    }
    workgroupBarrier();
  }
  for (var b = lane; b < TOKENS * blocks; b += lanes) {
    let row = min(t0 + b / blocks, params.tokens - 1u);
    let c = b % blocks;
    var v: array<vec4<f32>, 8>;
    var amax = vec4<f32>(0.0);
    var sum_sq = 0.0;
    for (var k = 0u; k < 8u; k++) {
      let x = X[row * x_stride + 8u * c + k];
      if (NORM_INPUT) { sum_sq += dot(x, x); }
      v[k] = x * x_gain(8u * c + k);
      amax = max(amax, abs(v[k]));
    }
    var m = max(max(amax.x, amax.y), max(amax.z, amax.w));
    if (X_GROUP > 1u) { m = bitcast<f32>(atomicLoad(&x_group_max[b / X_GROUP])); }
    let inv = select(0.0, 127.0 / m, m > 0.0);
    var words: array<u32, 8>;
    var sum_q = vec4<i32>(0);
    for (var k = 0u; k < 8u; k++) {
      let q = vec4<i32>(round(v[k] * inv));
      sum_q += q;
      words[k] = pack4xI8(q);
    }
    x_quants[2u * b] = vec4<u32>(words[0], words[1], words[2], words[3]);
    x_quants[2u * b + 1u] = vec4<u32>(words[4], words[5], words[6], words[7]);
    // Q8_0's d = max/127 stored as f16 (llama.cpp's block_q8_0); Q8_K's d = 1/iscale,
    // iscale = 127/max, in f32 (llama.cpp's quantize_row_q8_K, up to sign).
    let d = select(round_f16(vec4<f32>(m / 127.0)).x, select(0.0, 1.0 / inv, m > 0.0), X_GROUP > 1u);
    x_blocks[b] = XBlock(d, sum_sq, sum_q.x + sum_q.y + sum_q.z + sum_q.w);
  }
}
