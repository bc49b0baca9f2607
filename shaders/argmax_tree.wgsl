// Greedy sampling's shared reduction (joined after argmax.wgsl, argmax_partials.wgsl and
// argmax_merge.wgsl, which declare WG_SIZE): every invocation offers a (value, id) pair and
// `bestOfWorkgroup` leaves the winner — the larger value, or the lower id among equals — in
// bestValue[0], bestIndex[0]. Call it from uniform control flow (it holds barriers).

const NONE = 0xffffffffu;   // "no id": behind every real pair

var<workgroup> bestValue: array<f32, WG_SIZE>;
var<workgroup> bestIndex: array<u32, WG_SIZE>;

// Is (v, i) ahead of (w, j)?
fn ahead(v: f32, i: u32, w: f32, j: u32) -> bool {
  return i != NONE && (j == NONE || v > w || (v == w && i < j));
}

fn bestOfWorkgroup(lid: u32, v: f32, i: u32) {
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
}
