enable subgroups;

// Causal GQA decode attention with lanes across the head dimension. Workgroup (split s, kv head g,
// row r) takes the keys attention_decode_out.wgsl's key_range gives it and is TEAMS = WG_SIZE / LANES
// teams of LANES lanes. Lane l of a team holds, for each of the GROUP query heads sharing kv head g,
// the VEC = HEAD_DIM/4/LANES vec4s at l, l + LANES, … of its (pre-scaled) query in registers. Team
// t takes keys kBegin + t, kBegin + t + TEAMS, …: each lane loads its part of the key ONCE for all
// GROUP heads, the team sums its partial dots with subgroupShuffleXor (log2 LANES steps, so every
// lane has the score), updates the online softmax of each head (running max m, sum l) in
// registers, and adds the weighted value (one V load for all heads). The teams are then merged in
// workgroup memory, one head at a time, into the output (one split) or this split's partial
// (write_result). A team must lie inside one subgroup: LANES ≤ the adapter's minimum subgroup size
// (select.ts). The queries come from load_queries: attention_decode_io.wgsl (rotated apart) or
// attention_decode_rope_io.wgsl (RoPE and the cache store fused in).

override WG_SIZE: u32 = 128;     // a multiple of LANES
override HEAD_DIM: u32 = 64;     // a multiple of 4·LANES
override GROUP: u32 = 1;         // query heads per kv head; GROUP · VEC ≤ MAX_SLOTS
override LANES: u32 = 16;        // a power of two
override D4: u32 = HEAD_DIM / 4u;
override VEC: u32 = D4 / LANES;
override TEAMS: u32 = WG_SIZE / LANES;

const MAX_SLOTS = 16u;           // registers per lane: GROUP · VEC query and accumulator vec4s
const MAX_GROUP = 16u;
const NEG_BIG = -3.0e38;         // "no key yet": finite, so exp(NEG_BIG − m) is 0, never NaN

var<workgroup> qs: array<vec4<f32>, GROUP * D4>;          // the group's queries, pre-scaled
var<workgroup> teamAcc: array<vec4<f32>, TEAMS * D4>;     // one head's accumulators, per team
var<workgroup> teamMl: array<vec2<f32>, TEAMS>;           // one head's (m, l), per team

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sgLane: u32,
        @builtin(subgroup_size) sgSize: u32) {
  let split = wid.x;
  let g = wid.y;
  let r = wid.z;
  let slot = rows[r].x;
  let range = key_range(split, r);
  let kBegin = range.x;
  let kEnd = range.y;
  let kvHeads = params.nHeads / GROUP;
  let head0 = r * params.nHeads + g * GROUP;   // (row, first query head of the group)
  load_queries(lid, r, g, kBegin, kEnd);
  workgroupBarrier();

  // Team t is invocations t·LANES … +LANES−1, which the shuffles below assume lie in one subgroup
  // at lanes ≡ lid (mod LANES). WGSL does not promise that layout, so a subgroup where it fails
  // (or that is narrower than LANES) scores no keys: the output's 0 / 0 then shows as non-finite
  // instead of a plausible wrong value.
  let lane = lid % LANES;
  let team = lid / LANES;
  let laidOut = subgroupAll(sgSize >= LANES && sgLane % LANES == lane);

  var qv: array<vec4<f32>, MAX_SLOTS>;
  var acc: array<vec4<f32>, MAX_SLOTS>;
  var m: array<f32, MAX_GROUP>;
  var l: array<f32, MAX_GROUP>;
  var p: array<f32, MAX_GROUP>;
  for (var h = 0u; h < GROUP; h++) {
    for (var c = 0u; c < VEC; c++) {
      qv[h * VEC + c] = qs[h * D4 + lane + c * LANES];
      acc[h * VEC + c] = vec4<f32>(0.0);
    }
    m[h] = NEG_BIG;
    l[h] = 0.0;
  }

  for (var k0 = kBegin; k0 < kEnd; k0 += TEAMS) {
    let key = k0 + team;
    let valid = key < kEnd && laidOut;
    let base = ((slot * params.maxSeq + min(key, kEnd - 1u)) * kvHeads + g) * D4 + lane;
    var k: array<vec4<f32>, MAX_SLOTS>;
    for (var c = 0u; c < VEC; c++) { k[c] = loadK(base + c * LANES); }
    for (var h = 0u; h < GROUP; h++) {
      var s = 0.0;
      for (var c = 0u; c < VEC; c++) { s += dot(qv[h * VEC + c], k[c]); }
      for (var o = LANES / 2u; o > 0u; o >>= 1u) { s += subgroupShuffleXor(s, o); }
      let mNew = select(m[h], max(m[h], s), valid);
      let rescale = exp(m[h] - mNew);
      p[h] = select(0.0, exp(s - mNew), valid);
      l[h] = l[h] * rescale + p[h];
      m[h] = mNew;
      for (var c = 0u; c < VEC; c++) { acc[h * VEC + c] *= rescale; }
    }
    for (var c = 0u; c < VEC; c++) {
      let v = loadV(base + c * LANES);
      for (var h = 0u; h < GROUP; h++) { acc[h * VEC + c] += p[h] * v; }
    }
  }

  // Merge the teams, one head at a time: out = Σ_t exp(m_t − M) · acc_t / Σ_t exp(m_t − M) · l_t.
  for (var h = 0u; h < GROUP; h++) {
    for (var c = 0u; c < VEC; c++) { teamAcc[team * D4 + lane + c * LANES] = acc[h * VEC + c]; }
    if (lane == 0u) { teamMl[team] = vec2<f32>(m[h], l[h]); }
    workgroupBarrier();
    for (var i = lid; i < D4; i += WG_SIZE) {
      var mAll = NEG_BIG;
      for (var t = 0u; t < TEAMS; t++) { mAll = max(mAll, teamMl[t].x); }
      var lAll = 0.0;
      var a = vec4<f32>(0.0);
      for (var t = 0u; t < TEAMS; t++) {
        let w = exp(teamMl[t].x - mAll);
        lAll += teamMl[t].y * w;
        a += teamAcc[t * D4 + i] * w;
      }
      write_result(head0 + h, split, i, a, mAll, lAll);
    }
    workgroupBarrier();
  }
}
