enable subgroups;
diagnostic(off, subgroup_uniformity);

// Causal GQA attention for a step whose R rows all belong to one slot (a prefill or a prefill
// chunk), shaped for CPU adapters: one invocation per (row, query head), its query and
// accumulators in registers, no workgroup memory and no barrier. Workgroup (tile t, query head h)
// serves rows t·WG_SIZE … +WG_SIZE−1 and walks keys from the first any of its rows sees to the
// last, KEY_BLOCK at a time: score the block, update the running max and sum once, add the
// weighted values. Same bindings, parameters and contract as attention_prefill.wgsl (the slot is
// rows[0].x for every row; each row's own position masks the keys after it, and a sliding window
// the keys before pos − window + 1).
//
// Why a different kernel on CPU adapters: there every load whose index is not a compile-time
// constant runs lane by lane (lavapipe: a per-lane loop with a bounds check), while arithmetic runs
// on all lanes at once. The tiled kernel stages K/V, scores and weights in workgroup memory and
// reads them back per (query, key) with such loads, behind 3 barriers per key block. Here, in
// subgroups of 8 (lavapipe's SIMD width), each lane loads 1/8 of a key (or value) row and the
// subgroup broadcasts the pieces (a register shuffle): a K/V row costs each lane D4/8 loads for 8
// query rows. Elsewhere (other subgroup sizes, head dims not a multiple of 32) each lane loads
// the rows itself. K/V come through loadK / loadV of the kv_load_*.wgsl this body is joined with.

// Params and bindings: attention_prefill_io.wgsl.

override WG_SIZE: u32 = 8;       // rows per workgroup, one per invocation
override HEAD_DIM: u32 = 64;     // a multiple of 4, at most 4 · MAX_D4
override GROUP: u32 = 1;         // query heads per kv head
override D4: u32 = HEAD_DIM / 4u;

const MAX_D4 = 64u;              // head dims up to 256
const SHARE = 8u;                // subgroup size whose lanes share K/V loads
const KEY_BLOCK = 8u;            // keys scored per update of the running max
const NEG_BIG = -3.0e38;         // masked score / "no key yet": exp(NEG_BIG − m) is 0 once m is real

var<private> qv: array<vec4<f32>, MAX_D4>;    // the query, pre-scaled
var<private> acc: array<vec4<f32>, MAX_D4>;   // Σ exp(score − m) · v
var<private> shared_loads: bool;
var<private> sg_lane: u32;

// The subgroup's 8 lanes' vectors, lane j's at j.
fn gather8(v: vec4<f32>) -> array<vec4<f32>, 8> {
  return array<vec4<f32>, 8>(subgroupBroadcast(v, 0u), subgroupBroadcast(v, 1u), subgroupBroadcast(v, 2u), subgroupBroadcast(v, 3u),
                             subgroupBroadcast(v, 4u), subgroupBroadcast(v, 5u), subgroupBroadcast(v, 6u), subgroupBroadcast(v, 7u));
}

// q · k of key row `base` (index of its first vec4).
fn score(base: u32) -> f32 {
  var s = 0.0;
  if (shared_loads) {
    for (var c0 = 0u; c0 < D4; c0 += SHARE) {
      let k = gather8(loadK(base + c0 + sg_lane));
      for (var j = 0u; j < SHARE; j++) { s += dot(qv[c0 + j], k[j]); }
    }
  } else {
    for (var c = 0u; c < D4; c++) { s += dot(qv[c], loadK(base + c)); }
  }
  return s;
}

// acc += w · v of value row `base`.
fn add_value(base: u32, w: f32) {
  if (shared_loads) {
    for (var c0 = 0u; c0 < D4; c0 += SHARE) {
      let v = gather8(loadV(base + c0 + sg_lane));
      for (var j = 0u; j < SHARE; j++) { acc[c0 + j] += w * v[j]; }
    }
  } else {
    for (var c = 0u; c < D4; c++) { acc[c] += w * loadV(base + c); }
  }
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) subgroup_lane: u32,
        @builtin(subgroup_size) subgroup_size: u32) {
  shared_loads = subgroup_size == SHARE && D4 % SHARE == 0u;
  sg_lane = subgroup_lane;
  let r = wid.x * WG_SIZE + lid;
  let h = wid.y;
  let g = h / GROUP;
  let kvHeads = params.nHeads / GROUP;
  let slot = rows[0].x;
  // Rows past R repeat the last one (never stored), so every lane walks the same keys.
  let row = min(r, params.R - 1u);
  let last = min(rows[row].y, params.maxSeq - 1u);
  var first = 0u;
  if (params.window > 0u && last + 1u > params.window) { first = last + 1u - params.window; }
  // The keys any row of the subgroup sees (the loop bounds must be the subgroup's for the broadcasts).
  let lo = subgroupMin(first);
  let hi = subgroupMax(last);

  let qBase = (row * params.nHeads + h) * D4;
  for (var c = 0u; c < D4; c++) {
    qv[c] = q[qBase + c] * params.scale;
    acc[c] = vec4<f32>(0.0);
  }
  var m = NEG_BIG;
  var l = 0.0;
  let rowStride = kvHeads * D4;
  let kv0 = (slot * params.maxSeq) * rowStride + g * D4;
  for (var k0 = lo; k0 <= hi; k0 += KEY_BLOCK) {
    var s: array<f32, KEY_BLOCK>;
    var blockMax = NEG_BIG;
    for (var j = 0u; j < KEY_BLOCK; j++) {
      let k = min(k0 + j, hi);
      let x = score(kv0 + k * rowStride);
      s[j] = select(NEG_BIG, x, k0 + j >= first && k0 + j <= last);
      blockMax = max(blockMax, s[j]);
    }
    let mNew = max(m, blockMax);
    let rescale = exp(m - mNew);
    m = mNew;
    l *= rescale;
    for (var c = 0u; c < D4; c++) { acc[c] *= rescale; }
    for (var j = 0u; j < KEY_BLOCK; j++) {
      // Masked keys weigh 0 once m is a real score; before that (a window's first keys) they add
      // finite garbage that the first real score's rescale (exp(NEG_BIG − m) = 0) wipes out.
      let w = exp(s[j] - m);
      l += w;
      add_value(kv0 + min(k0 + j, hi) * rowStride, w);
    }
  }
  if (r < params.R) {
    let inv = 1.0 / l;
    for (var c = 0u; c < D4; c++) { out[qBase + c] = acc[c] * inv; }
  }
}
