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

// NONE, bestValue/bestIndex, ahead() and bestOfWorkgroup() come from argmax_tree.wgsl.

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
  bestOfWorkgroup(lid, v, i);
  if (lid == 0u) {
    tokens[wid.x] = bestIndex[0];
  }
}
