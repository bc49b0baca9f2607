enable subgroups;

// Greedy sampling with subgroup reductions (same bindings as argmax.wgsl): each subgroup takes
// the max value and the lowest index holding it, its first lane stores the pair, and invocation 0
// merges the per-subgroup pairs in order (subgroups are consecutive runs of local_invocation_index).

struct Params {
  vocab: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;         // (R, vocab)
@group(0) @binding(1) var<storage, read_write> tokens: array<u32>;   // (R)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;   // a power of two

const NONE = 0xffffffffu;

var<workgroup> bestValue: array<f32, WG_SIZE>;   // one pair per subgroup
var<workgroup> bestIndex: array<u32, WG_SIZE>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) sgSize: u32) {
  let base = wid.x * params.vocab;
  var v = logits[base];   // lanes with no logit of their own hold a real one (≤ the max) and no index
  var i = NONE;
  for (var t = lid; t < params.vocab; t += WG_SIZE) {
    let l = logits[base + t];
    if (i == NONE || l > v) {
      v = l;
      i = t;
    }
  }
  let m = subgroupMax(v);
  let first = subgroupMin(select(NONE, i, v == m));
  if (lane == 0u) {
    bestValue[lid / sgSize] = m;
    bestIndex[lid / sgSize] = first;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var bv = bestValue[0];
    var bi = bestIndex[0];
    for (var s = 1u; s < (WG_SIZE + sgSize - 1u) / sgSize; s++) {
      let w = bestValue[s];
      let j = bestIndex[s];
      if (j != NONE && (bi == NONE || w > bv || (w == bv && j < bi))) {
        bv = w;
        bi = j;
      }
    }
    tokens[wid.x] = bi;
  }
}
