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
