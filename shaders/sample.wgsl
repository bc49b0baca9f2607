// Stochastic sampling on the GPU, one workgroup per row, with no sort:
//  1. lmax = max logit; weight w_i = exp((l_i − lmax) / temperature) (unnormalised softmax).
//  2. Logits are ordered by key(l), a u32 that sorts like the f32. top-k: the largest key t with
//     #{key ≥ t} ≥ k; top-p: the largest t with mass(key ≥ t, within top-k) ≥ topP · mass(top-k).
//     Both are found 4 bits per pass (`search`: 8 passes, each tallying 16 candidates at once).
//     Kept = {key ≥ t} (ties at the threshold are all kept).
//  3. u = hash(seed, step, row) in [0, 1); goal = u · kept mass; the token is the first index,
//     in index order, where the running kept mass exceeds goal: each invocation owns a
//     contiguous chunk, invocation 0 scans the chunk sums, the owner of goal scans its chunk.
// temperature 0 is argmax: the kept set is the max logits, each of weight 1, and goal 0 picks
// the lowest index. test/gpu/sampling-reference.ts is the same algorithm on the CPU.

struct Params {
  vocab: u32,
  topK: u32,         // 0: off
  seed: u32,
  step: u32,
  temperature: f32,  // 0: greedy
  topP: f32,         // ≥ 1: off
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;         // (R, vocab)
@group(0) @binding(1) var<storage, read_write> tokens: array<u32>;   // (R)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;   // a power of two

// 72 bytes per invocation in all (select.ts sampleWorkgroupSize keeps it within the device limit).
var<workgroup> partial: array<f32, WG_SIZE>;
var<workgroup> tallies: array<vec4<f32>, WG_SIZE * 4u>;   // 16 per invocation
var<workgroup> prefix: array<f32, WG_SIZE + 1u>;          // kept mass before each invocation's chunk

// Workgroup-wide sum (or max) of one value per invocation; every invocation gets the result.
fn reduce(lid: u32, value: f32, isMax: bool) -> f32 {
  partial[lid] = value;
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      let other = partial[lid + s];
      partial[lid] = select(partial[lid] + other, max(partial[lid], other), isMax);
    }
    workgroupBarrier();
  }
  let result = partial[0];
  workgroupBarrier();
  return result;
}

// Workgroup-wide sums of 16 tallies per invocation (counts as f32: exact below 2^24).
fn reduceTallies(lid: u32, mine: array<vec4<f32>, 4>) -> array<vec4<f32>, 4> {
  for (var j = 0u; j < 4u; j++) {
    tallies[lid * 4u + j] = mine[j];
  }
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      for (var j = 0u; j < 4u; j++) {
        tallies[lid * 4u + j] += tallies[(lid + s) * 4u + j];
      }
    }
    workgroupBarrier();
  }
  var sums: array<vec4<f32>, 4>;
  for (var j = 0u; j < 4u; j++) {
    sums[j] = tallies[j];
  }
  workgroupBarrier();
  return sums;
}

fn orderKey(l: f32) -> u32 {
  let bits = bitcast<u32>(l);
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

// PCG hash (Jarzynski & Olano 2020).
fn pcg(v: u32) -> u32 {
  let state = v * 747796405u + 2891336453u;
  let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

fn weight(l: f32, lmax: f32) -> f32 {
  if (params.temperature == 0.0) {
    return 1.0;
  }
  return exp((l - lmax) / params.temperature);
}

// The weight of a logit if it is kept (key ≥ threshold), else 0.
fn kept(l: f32, threshold: u32, lmax: f32) -> f32 {
  return select(0.0, weight(l, lmax), orderKey(l) >= threshold);
}

// The largest key t whose tally — the count (mass = false) or weight (mass = true) of the row's
// logits with key ≥ t, among those with key ≥ floor — is positive and ≥ need. The tally only
// shrinks as t grows, so t is built 4 bits at a time: each pass tallies the 16 candidates
// t | d << shift (d = 0…15) at once and keeps the largest d that still qualifies.
fn search(lid: u32, base: u32, lmax: f32, floor: u32, mass: bool, need: f32) -> u32 {
  var t = 0u;
  for (var shift = 28i; shift >= 0i; shift -= 4i) {
    let sh = u32(shift);
    let digits = t >> sh;   // its low 4 bits are still 0
    var mine = array<vec4<f32>, 4>();   // zeroed explicitly: Dawn on lavapipe did not re-zero an uninitialised var per iteration
    for (var i = lid; i < params.vocab; i += WG_SIZE) {
      let l = logits[base + i];
      let key = orderKey(l);
      if (key >= floor && (key >> sh) >= digits) {
        let d = vec4<u32>(min((key >> sh) - digits, 15u));
        let w = vec4<f32>(select(1.0, weight(l, lmax), mass));
        for (var j = 0u; j < 4u; j++) {
          mine[j] += select(vec4<f32>(0.0), w, d >= vec4<u32>(4u * j) + vec4<u32>(0u, 1u, 2u, 3u));
        }
      }
    }
    let sums = reduceTallies(lid, mine);
    var best = 0u;
    for (var d = 1u; d < 16u; d++) {
      let tally = sums[d / 4u][d % 4u];
      if (tally > 0.0 && tally >= need) {
        best = d;
      }
    }
    t |= best << sh;
  }
  return t;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  let base = row * params.vocab;
  var localMax = logits[base];
  for (var i = lid; i < params.vocab; i += WG_SIZE) {
    localMax = max(localMax, logits[base + i]);
  }
  let lmax = reduce(lid, localMax, true);

  var threshold = orderKey(lmax);
  if (params.temperature > 0.0) {
    threshold = 0u;
    if (params.topK > 0u && params.topK < params.vocab) {
      threshold = search(lid, base, lmax, 0u, false, f32(params.topK));
    }
    if (params.topP < 1.0) {
      var topKMass = 0.0;
      for (var i = lid; i < params.vocab; i += WG_SIZE) {
        topKMass += kept(logits[base + i], threshold, lmax);
      }
      let wanted = params.topP * reduce(lid, topKMass, false);
      threshold = max(search(lid, base, lmax, threshold, true, wanted), threshold);
    }
  }

  let chunk = (params.vocab + WG_SIZE - 1u) / WG_SIZE;
  let begin = min(lid * chunk, params.vocab);
  let end = min(begin + chunk, params.vocab);
  var mine = 0.0;
  for (var i = begin; i < end; i++) {
    mine += kept(logits[base + i], threshold, lmax);
  }
  partial[lid] = mine;
  workgroupBarrier();
  if (lid == 0u) {
    prefix[0] = 0.0;
    for (var t = 0u; t < WG_SIZE; t++) {
      prefix[t + 1u] = prefix[t] + partial[t];
    }
  }
  workgroupBarrier();

  let total = prefix[WG_SIZE];
  let u = f32(pcg(pcg(pcg(row) + params.step) + params.seed) >> 8u) * (1.0 / 16777216.0);
  var goal = 0.0;
  if (params.temperature > 0.0) {
    goal = min(u * total, bitcast<f32>(bitcast<u32>(total) - 1u));   // < total despite rounding
  }
  if (prefix[lid] <= goal && goal < prefix[lid + 1u]) {
    var running = prefix[lid];
    var chosen = 0u;
    for (var i = begin; i < end; i++) {
      let w = kept(logits[base + i], threshold, lmax);
      if (w > 0.0) {
        chosen = i;
        running += w;
        if (running > goal) {
          break;
        }
      }
    }
    tokens[row] = chosen;
  }
}
