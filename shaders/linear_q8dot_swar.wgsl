enable subgroups;
diagnostic(off, subgroup_uniformity);

// Decode (and batched decode and prefill: TOKENS ≤ 4 rows of X, a register tile of ROW_BLOCK rows ×
// TOKENS tokens, ≤ 16) of the nibble formats q4_0 and q4_k for CPU adapters: linear_q8dot.wgsl's
// 8-bit activations (staged once per workgroup), one invocation per ROW_BLOCK weight rows over all
// columns (linear_q8dot_rows.wgsl's shape), with the block products done two at a time in 16-bit
// fields of a u32 (SWAR) instead of dot4I8Packed, and every load made as wide as the data allows.
//
// Why: lavapipe runs every storage or workgroup load whose index is not a compile-time constant
// lane by lane (Mesa's load_ssbo: a per-lane loop with a bounds check, ~27 scalar instructions per
// lane for a vec4, ~12 for a u32), while ALU runs on all 8 lanes at once; dot4I8Packed has no
// native instruction there and becomes 4 byte extracts, 4 multiplies and 3 adds per 4 weights.
// So this kernel (measured in a stand-alone harness on lavapipe, 16384 × 2048 q4_0 rows):
//  - loads each weight block as one vec4 (16 bytes, one per-lane loop for 32 weights);
//  - loads the scales of 8 blocks as one vec4 (q4_0: from the scale region of the same buffer,
//    where a row's blocks come in multiples of 8, a u32 per block otherwise; q4_k: the
//    super-block's header): a u32 load per block had cost a third of the time;
//  - shares X through the subgroup: lane l reads the block's staged word l and broadcasts its pairs
//    (a broadcast is a register shuffle), instead of every lane reading all 8 words;
//  - multiplies in SWAR: (q_a + q_b·2¹⁶)·(x_b + x_a·2¹⁶) mod 2³² holds q_a·x_a + q_b·x_b in its
//    high 16 bits (q_a·x_b in the low ones, q_b·x_a·2³² falls off), so a mask, a multiply and an
//    add serve two weights; 8 products accumulate before the high half is taken. Bounds: with
//    x in [−127, 127] and q in [0, 15], 8 products' high fields sum to |H| ≤ 30,480 and low fields
//    to |L| ≤ 15,240 < 2¹⁵, so the true sum L + H·2¹⁶ fits an i32 and (S + 2¹⁵) >> 16 (arithmetic)
//    is exactly H. Exact integer arithmetic: the sums equal dot4I8Packed's.
//
// Joined before linear_q8dot.wgsl (staging: x_quants, x_blocks, stage_rows),
// linear_q8dot_swar_nibbles.wgsl (the SWAR products: x_pairs, swar_dot), the format's part
// (linear_q8dot_swar_<format>.wgsl: where a row's blocks and their scales sit — swar_row_base,
// swar_group, swar_quants, swar_scale, swar_block_scale, SWAR_GROUPS_OF_8 — and swar_term, a
// block's Σ w·q_x), linear_io.wgsl and the format's weight library; same binding contract and grid
// as linear_q8dot_rows.wgsl (grid z over groups of TOKENS rows of X). Subgroups of 8 share X; at
// another size every lane reads the words itself.

const SWAR_MAX_ROWS = 16u;       // ROW_BLOCK and ROW_BLOCK · TOKENS ≤ this here (linear.ts checks it)
const SWAR_MAX_TOKENS = 4u;      // TOKENS ≤ this here (linear.ts checks it)

var<private> sg_size: u32;
var<private> sg_lane: u32;

// Block c's 8 staged words as SWAR pairs.
fn block_pairs(c: u32) -> array<vec2<u32>, 8> {
  var x: array<vec2<u32>, 8>;
  if (sg_size == 8u) {
    let mine = x_pairs(x_quants[2u * c + sg_lane / 4u][sg_lane % 4u]);
    x = array<vec2<u32>, 8>(subgroupBroadcast(mine, 0u), subgroupBroadcast(mine, 1u), subgroupBroadcast(mine, 2u), subgroupBroadcast(mine, 3u),
                            subgroupBroadcast(mine, 4u), subgroupBroadcast(mine, 5u), subgroupBroadcast(mine, 6u), subgroupBroadcast(mine, 7u));
  } else {
    for (var k = 0u; k < 8u; k++) { x[k] = x_pairs(x_quants[2u * c + k / 4u][k % 4u]); }
  }
  return x;
}

var<private> row_base: array<u32, SWAR_MAX_ROWS>;    // each row of the invocation (swar_row_base)
var<private> groups: array<vec4<u32>, SWAR_MAX_ROWS>; // each row's scale data of its current 8 blocks (swar_group)
var<private> sb: array<vec2<f32>, SWAR_MAX_ROWS>;     // each row's (scale, bias) of the current block
var<private> acc: array<f32, SWAR_MAX_ROWS>;         // (ROW_BLOCK, TOKENS) dot products, ROW_BLOCK · TOKENS ≤ 16
var<private> sum_sq: array<f32, SWAR_MAX_TOKENS>;    // NORM_INPUT: Σx² of each token's raw input

// Block c for every row and token, with the rows' (scale, bias) in sb. One token (decode): each
// row's block loaded and used at once. More (the register tile): each token's X pairs first, then
// each row's block once for all of them (loading every row's block first measured 1.5× slower at
// 16 rows: it keeps 16 vectors live across the products). The one-token path declares no
// per-token arrays: WGSL zero-fills every `var`, which SwiftShader pays per element (2.6× slower
// decode there); the per-row arrays are module-scope for the same reason (zeroed once).
fn add_block(c: u32) {
  if (TOKENS == 1u) {
    let x = block_pairs(c);
    let xb = x_blocks[c];
    if (NORM_INPUT) { sum_sq[0] += xb.sum_sq; }
    for (var i = 0u; i < ROW_BLOCK; i++) {
      acc[i] = fma(xb.d, swar_term(sb[i], swar_dot(swar_quants(row_base[i], c), x), xb.sum_q), acc[i]);
    }
    return;
  }
  let blocks = params.cols / 32u;
  var x: array<array<vec2<u32>, 8>, SWAR_MAX_TOKENS>;
  var scale: array<f32, SWAR_MAX_TOKENS>;
  var sum_q: array<i32, SWAR_MAX_TOKENS>;
  for (var t = 0u; t < TOKENS; t++) {
    x[t] = block_pairs(t * blocks + c);
    let xb = x_blocks[t * blocks + c];
    if (NORM_INPUT) { sum_sq[t] += xb.sum_sq; }
    scale[t] = xb.d;
    sum_q[t] = xb.sum_q;
  }
  for (var i = 0u; i < ROW_BLOCK; i++) {
    let w = swar_quants(row_base[i], c);
    for (var t = 0u; t < TOKENS; t++) {
      acc[i * TOKENS + t] = fma(scale[t], swar_term(sb[i], swar_dot(w, x[t]), sum_q[t]), acc[i * TOKENS + t]);
    }
  }
}

// Block c's 8 staged words as SWAR pairs, read by the first 4 lanes of a subgroup of 4 or more (2
// words each) and broadcast: a value built in registers, where block_pairs builds an array in
// branches (which Subzero keeps in memory).
fn shared_pairs(c: u32) -> array<vec2<u32>, 8> {
  let low = x_pairs(x_quants[2u * c][sg_lane % 4u]);
  let high = x_pairs(x_quants[2u * c + 1u][sg_lane % 4u]);
  return array<vec2<u32>, 8>(subgroupBroadcast(low, 0u), subgroupBroadcast(low, 1u), subgroupBroadcast(low, 2u), subgroupBroadcast(low, 3u),
                             subgroupBroadcast(high, 0u), subgroupBroadcast(high, 1u), subgroupBroadcast(high, 2u), subgroupBroadcast(high, 3u));
}

// One token (row t0 of X, staged at 0), ROW_BLOCK = 8, subgroups of 4 or more: the same sums as
// add_block's one-token path, with each row's base, scales and accumulator in a named variable
// instead of an array indexed by the row loop's counter, and the two scale layouts in two loops
// rather than a branch per row. SwiftShader in Chrome compiles with Subzero, which keeps such an
// array in memory and reads or writes it lane by lane, with a branch per lane, like any load whose
// index it cannot fold (SIMD::Pointer's gather): 4 such accesses per row and block beside the
// weight block's 4. Named, q4_0 matrices ran 1.1–1.3× faster there than 16 rows in arrays, q4_k
// 1.1×; lavapipe, whose LLVM keeps the arrays in registers, keeps 16 rows in arrays
// (docs/KERNEL-CHOICES.md L14). Stores in row order, so a GATED pair's gate comes before its up.
fn one_token_rows8(row0: u32, t0: u32) {
  let blocks = params.cols / 32u;
  let last = params.rows - 1u;
  let b0 = swar_row_base(min(row0 + 0u, last));
  let b1 = swar_row_base(min(row0 + 1u, last));
  let b2 = swar_row_base(min(row0 + 2u, last));
  let b3 = swar_row_base(min(row0 + 3u, last));
  let b4 = swar_row_base(min(row0 + 4u, last));
  let b5 = swar_row_base(min(row0 + 5u, last));
  let b6 = swar_row_base(min(row0 + 6u, last));
  let b7 = swar_row_base(min(row0 + 7u, last));
  var a0 = 0.0; var a1 = 0.0; var a2 = 0.0; var a3 = 0.0;
  var a4 = 0.0; var a5 = 0.0; var a6 = 0.0; var a7 = 0.0;
  var sq = 0.0;
  if (SWAR_GROUPS_OF_8 || blocks % 8u == 0u) {
    for (var c8 = 0u; c8 < blocks; c8 += 8u) {
      let g0 = swar_group(b0, c8); let g1 = swar_group(b1, c8); let g2 = swar_group(b2, c8); let g3 = swar_group(b3, c8);
      let g4 = swar_group(b4, c8); let g5 = swar_group(b5, c8); let g6 = swar_group(b6, c8); let g7 = swar_group(b7, c8);
      for (var j = 0u; j < 8u; j++) {
        let c = c8 + j;
        let x = shared_pairs(c);
        let xb = x_blocks[c];
        if (NORM_INPUT) { sq += xb.sum_sq; }
        a0 = fma(xb.d, swar_term(swar_scale(g0, j), swar_dot(swar_quants(b0, c), x), xb.sum_q), a0);
        a1 = fma(xb.d, swar_term(swar_scale(g1, j), swar_dot(swar_quants(b1, c), x), xb.sum_q), a1);
        a2 = fma(xb.d, swar_term(swar_scale(g2, j), swar_dot(swar_quants(b2, c), x), xb.sum_q), a2);
        a3 = fma(xb.d, swar_term(swar_scale(g3, j), swar_dot(swar_quants(b3, c), x), xb.sum_q), a3);
        a4 = fma(xb.d, swar_term(swar_scale(g4, j), swar_dot(swar_quants(b4, c), x), xb.sum_q), a4);
        a5 = fma(xb.d, swar_term(swar_scale(g5, j), swar_dot(swar_quants(b5, c), x), xb.sum_q), a5);
        a6 = fma(xb.d, swar_term(swar_scale(g6, j), swar_dot(swar_quants(b6, c), x), xb.sum_q), a6);
        a7 = fma(xb.d, swar_term(swar_scale(g7, j), swar_dot(swar_quants(b7, c), x), xb.sum_q), a7);
      }
    }
  } else {
    for (var c = 0u; c < blocks; c++) {
      let x = shared_pairs(c);
      let xb = x_blocks[c];
      if (NORM_INPUT) { sq += xb.sum_sq; }
      a0 = fma(xb.d, swar_term(swar_block_scale(b0, c), swar_dot(swar_quants(b0, c), x), xb.sum_q), a0);
      a1 = fma(xb.d, swar_term(swar_block_scale(b1, c), swar_dot(swar_quants(b1, c), x), xb.sum_q), a1);
      a2 = fma(xb.d, swar_term(swar_block_scale(b2, c), swar_dot(swar_quants(b2, c), x), xb.sum_q), a2);
      a3 = fma(xb.d, swar_term(swar_block_scale(b3, c), swar_dot(swar_quants(b3, c), x), xb.sum_q), a3);
      a4 = fma(xb.d, swar_term(swar_block_scale(b4, c), swar_dot(swar_quants(b4, c), x), xb.sum_q), a4);
      a5 = fma(xb.d, swar_term(swar_block_scale(b5, c), swar_dot(swar_quants(b5, c), x), xb.sum_q), a5);
      a6 = fma(xb.d, swar_term(swar_block_scale(b6, c), swar_dot(swar_quants(b6, c), x), xb.sum_q), a6);
      a7 = fma(xb.d, swar_term(swar_block_scale(b7, c), swar_dot(swar_quants(b7, c), x), xb.sum_q), a7);
    }
  }
  if (t0 >= params.tokens) { return; }
  let scale = input_scale(sq);
  let sums = array<f32, 8>(a0, a1, a2, a3, a4, a5, a6, a7);
  for (var i = 0u; i < 8u; i++) {
    if (row0 + i >= params.rows) { break; }
    store(t0, row0 + i, sums[i] * scale);
  }
}

@compute @workgroup_size(LANES)
fn main(@builtin(local_invocation_index) lane: u32,
        @builtin(subgroup_invocation_id) subgroup_lane: u32,
        @builtin(subgroup_size) subgroup_size: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  sg_size = subgroup_size;
  sg_lane = subgroup_lane;
  let t0 = wid.z * TOKENS;   // TOKENS rows of X per workgroup; grid z covers the rest
  stage_rows(lane, LANES, t0);
  workgroupBarrier();
  let row0 = ((wid.x + wid.y * nwg.x) * LANES + lane) * ROW_BLOCK;
  if (TOKENS == 1u && ROW_BLOCK == 8u && sg_size >= 4u) {
    one_token_rows8(row0, t0);
    return;
  }
  let blocks = params.cols / 32u;
  // Rows past the shard repeat the last one (never stored), so every loop has a constant trip count.
  for (var i = 0u; i < ROW_BLOCK; i++) { row_base[i] = swar_row_base(min(row0 + i, params.rows - 1u)); }
  if (SWAR_GROUPS_OF_8 || blocks % 8u == 0u) {
    // Every row's blocks come in groups of 8 whose scales are one 16-byte vector.
    for (var c8 = 0u; c8 < blocks; c8 += 8u) {
      for (var i = 0u; i < ROW_BLOCK; i++) { groups[i] = swar_group(row_base[i], c8); }
      // Not unrolled: the body (ROW_BLOCK rows, each load a lane-by-lane loop) is already ~10 KiB
      // of machine code on lavapipe; unrolled 8 times it outgrew the instruction cache.
      for (var j = 0u; j < 8u; j++) {
        for (var i = 0u; i < ROW_BLOCK; i++) { sb[i] = swar_scale(groups[i], j); }
        add_block(c8 + j);
      }
    }
  } else {
    for (var c = 0u; c < blocks; c++) {
      for (var i = 0u; i < ROW_BLOCK; i++) { sb[i] = swar_block_scale(row_base[i], c); }
      add_block(c);
    }
  }
  // GATED pairs (2j, 2j+1) are rows of one invocation (ROW_BLOCK even): gate first for every token, then up.
  for (var i = 0u; i < ROW_BLOCK; i++) {
    if (row0 + i >= params.rows) { break; }
    for (var t = 0u; t < TOKENS; t++) {
      if (t0 + t < params.tokens) { store(t0 + t, row0 + i, acc[i * TOKENS + t] * input_scale(sum_sq[t])); }
    }
  }
}
