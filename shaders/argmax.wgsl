// Greedy sampling: tokens[r] = argmax of logits[r], ties → lowest index. One workgroup per row;
// each invocation scans a lane-interleaved stride of the vocabulary, then a tree in workgroup
// memory picks the larger value, or the lower index among equals (argmax_subgroups.wgsl: subgroups).

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

var<workgroup> bestValue: array<f32, WG_SIZE>;
var<workgroup> bestIndex: array<u32, WG_SIZE>;

// Is (v, i) ahead of (w, j)?
fn ahead(v: f32, i: u32, w: f32, j: u32) -> bool {
  return i != NONE && (j == NONE || v > w || (v == w && i < j));
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * params.vocab;
  var v = 0.0;
  var i = NONE;
  for (var t = lid; t < params.vocab; t += WG_SIZE) {
    let l = logits[base + t];
    if (i == NONE || l > v) {
      v = l;
      i = t;
    }
  }
  bestValue[lid] = v;
  bestIndex[lid] = i;
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s && ahead(bestValue[lid + s], bestIndex[lid + s], bestValue[lid], bestIndex[lid])) {
      bestValue[lid] = bestValue[lid + s];
      bestIndex[lid] = bestIndex[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    tokens[wid.x] = bestIndex[0];
  }
}
