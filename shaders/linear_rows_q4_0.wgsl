// linear_rows.wgsl specialised for q4_0: the CPU adapters' decode matvec (select.ts picks it at
// R = 1), one invocation per ROW_BLOCK weight rows, TOKENS rows of X per invocation, no reduction.
//
// On lavapipe a storage load whose index is not a compile-time constant runs lane by lane (extract
// the index, check the lane is active, reload the buffer's base and size, bounds-check, load,
// insert: ~12 scalar instructions per 32-bit component, read off GALLIVM_DEBUG=asm), while the
// arithmetic runs on all lanes at once. Loads, not DRAM or FLOPs, bound the decode matvec there,
// so this kernel spends as few loads per weight as the format allows:
//  - each weight word is loaded as one u32 (a vec4 load costs more per component there);
//  - a nibble is masked in place, never shifted: X is pre-scaled instead, once per block for all
//    ROW_BLOCK rows (x·1, x/2⁸, x/2¹⁶, x/2²⁴ for the low nibbles of bytes 0..3, and /2⁴ more for the
//    high ones; exact, powers of two), so a weight costs a mask, a conversion and an FMA
//    (ggml Metal's kernel_mul_mv_q4_0 does the same with 16-bit words);
//  - the −8 offset is applied once per block through Σx: Σ(q − 8)·x = Σq·x − 8·Σx;
//  - the f16 scales of two consecutive blocks share a word: with an even number of blocks per row
//    (every real model) one load serves a block pair.
// Joined after a variant that supplies X and the entry point (linear_rows_q4_0_loads.wgsl,
// linear_rows_q4_0_subgroups.wgsl), then linear_io.wgsl (bindings, prologue, epilogue) and
// weights_q4_0.wgsl + weights_scales.wgsl (W, W_scales, block_scale); same binding contract and
// grid as linear_rows.wgsl.

override LANES: u32 = 8;       // invocations per workgroup
override ROW_BLOCK: u32 = 8;   // weight rows per invocation (≤ MAX_ROW_BLOCK; even when GATED)
override TOKENS: u32 = 1;      // rows of X per invocation (≤ MAX_TOKENS); grid z covers the rest

const MAX_ROW_BLOCK = 8u;
const MAX_TOKENS = 8u;
const MAX_TILE = 16u;          // ROW_BLOCK · TOKENS

// Word k of a block holds weights 4k..4k+3 in the low nibbles of its bytes and 16+4k..16+4k+3
// in the high ones; masked in place, nibble j of byte b is q·2^(8b) (low) or q·2^(8b+4) (high).
const LOW_NIBBLES = vec4<u32>(0xFu, 0xF00u, 0xF0000u, 0xF000000u);
const HIGH_NIBBLES = vec4<u32>(0xF0u, 0xF000u, 0xF00000u, 0xF0000000u);
const LOW_SCALE = vec4<f32>(1.0, 1.0 / 256.0, 1.0 / 65536.0, 1.0 / 16777216.0);
const HIGH_SCALE = vec4<f32>(1.0 / 16.0, 1.0 / 4096.0, 1.0 / 1048576.0, 1.0 / 268435456.0);

var<private> row_base: array<u32, MAX_ROW_BLOCK>;   // first block of each row of the invocation
var<private> token: array<u32, MAX_TOKENS>;         // X row of each token slot (the last one repeated)
var<private> acc: array<f32, MAX_TILE>;             // (ROW_BLOCK, TOKENS) dot products
var<private> sum_sq: array<f32, MAX_TOKENS>;        // NORM_INPUT: Σx² of each token's raw input

// Adds block c of every row, scaled by d (ROW_BLOCK f16 scales), to acc. x: the block's 8 vectors of
// each token's X (block_x, from the variant: loaded by every invocation, or once per subgroup).
fn add_block(c: u32, d: array<f32, MAX_ROW_BLOCK>, x: array<array<vec4<f32>, 8>, MAX_TOKENS>) {
  var gain: array<vec4<f32>, 8>;
  if (NORM_INPUT) { gain = block_gain(c); }
  var p = array<f32, MAX_TILE>();             // Σ q·x per (row, token)
  var x_sum: array<vec4<f32>, MAX_TOKENS>;    // Σ x per token
  for (var k = 0u; k < 4u; k++) {
    var low: array<vec4<f32>, MAX_TOKENS>;
    var high: array<vec4<f32>, MAX_TOKENS>;
    for (var t = 0u; t < TOKENS; t++) {
      var x_low = x[t][k];
      var x_high = x[t][k + 4u];
      if (NORM_INPUT) {
        sum_sq[t] += dot(x_low, x_low) + dot(x_high, x_high);
        x_low *= gain[k];
        x_high *= gain[k + 4u];
      }
      x_sum[t] += x_low + x_high;
      low[t] = x_low * LOW_SCALE;
      high[t] = x_high * HIGH_SCALE;
    }
    for (var i = 0u; i < ROW_BLOCK; i++) {
      let word = vec4<u32>(W[row_base[i] + c][k]);
      let q_low = vec4<f32>(word & LOW_NIBBLES);
      let q_high = vec4<f32>(word & HIGH_NIBBLES);
      for (var t = 0u; t < TOKENS; t++) {
        var s = p[i * TOKENS + t];
        s = fma(q_low.x, low[t].x, s);
        s = fma(q_high.x, high[t].x, s);
        s = fma(q_low.y, low[t].y, s);
        s = fma(q_high.y, high[t].y, s);
        s = fma(q_low.z, low[t].z, s);
        s = fma(q_high.z, high[t].z, s);
        s = fma(q_low.w, low[t].w, s);
        s = fma(q_high.w, high[t].w, s);
        p[i * TOKENS + t] = s;
      }
    }
  }
  for (var t = 0u; t < TOKENS; t++) {
    let offset = 8.0 * dot(x_sum[t], vec4<f32>(1.0));
    for (var i = 0u; i < ROW_BLOCK; i++) { acc[i * TOKENS + t] = fma(d[i], p[i * TOKENS + t] - offset, acc[i * TOKENS + t]); }
  }
}

// The entry point (linear_rows_q4_0_loads.wgsl, linear_rows_q4_0_subgroups.wgsl) calls this.
fn rows_q4_0(lane: u32, wid: vec3<u32>, nwg: vec3<u32>) {
  let row0 = ((wid.x + wid.y * nwg.x) * LANES + lane) * ROW_BLOCK;
  let t0 = wid.z * TOKENS;
  let blocks = params.cols / 32u;
  // Rows past the shard and tokens past the step repeat the last one (never stored), so every
  // loop has a constant trip count.
  for (var i = 0u; i < ROW_BLOCK; i++) { row_base[i] = min(row0 + i, params.rows - 1u) * blocks; }
  for (var t = 0u; t < TOKENS; t++) { token[t] = min(t0 + t, params.tokens - 1u); }
  if (blocks % 2u == 0u) {
    // Every row starts on an even block: blocks c and c + 1 share a scale word.
    for (var c = 0u; c < blocks; c += 2u) {
      var d0: array<f32, MAX_ROW_BLOCK>;
      var d1: array<f32, MAX_ROW_BLOCK>;
      for (var i = 0u; i < ROW_BLOCK; i++) {
        let pair = unpack2x16float(W_scales[params.scale_base + (row_base[i] + c) / 2u]);
        d0[i] = pair.x;
        d1[i] = pair.y;
      }
      add_block(c, d0, block_x(c));
      add_block(c + 1u, d1, block_x(c + 1u));
    }
  } else {
    for (var c = 0u; c < blocks; c++) {
      var d: array<f32, MAX_ROW_BLOCK>;
      for (var i = 0u; i < ROW_BLOCK; i++) { d[i] = block_scale(row_base[i] + c); }
      add_block(c, d, block_x(c));
    }
  }
  // GATED pairs (2j, 2j+1) are rows of one invocation (ROW_BLOCK even), stored gate first for
  // every token, then up.
  for (var i = 0u; i < ROW_BLOCK; i++) {
    if (row0 + i >= params.rows) { break; }
    for (var t = 0u; t < TOKENS; t++) {
      if (t0 + t < params.tokens) { store(t0 + t, row0 + i, acc[i * TOKENS + t] * input_scale(sum_sq[t])); }
    }
  }
}
