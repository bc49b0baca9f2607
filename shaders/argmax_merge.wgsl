// Greedy sampling, pass two of two (after argmax_partials.wgsl): one workgroup per row merges the
// row's chunk winners — larger value, or the lower id among equals — into tokens[r].

struct Params {
  vocab: u32,
  chunk: u32,
  chunks: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> partials: array<u32>;            // (R, chunks, 2): value bits, id
@group(0) @binding(1) var<storage, read_write> tokens: array<u32>;        // (R)
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 64;   // a power of two

// NONE, bestValue/bestIndex, ahead() and bestOfWorkgroup() come from argmax_tree.wgsl.

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x;
  var v = 0.0;
  var i = NONE;
  for (var c = lid; c < params.chunks; c += WG_SIZE) {
    let p = 2u * (r * params.chunks + c);
    let w = bitcast<f32>(partials[p]);
    let j = partials[p + 1u];
    if (ahead(w, j, v, i)) {
      v = w;
      i = j;
    }
  }
  bestOfWorkgroup(lid, v, i);
  if (lid == 0u) {
    tokens[r] = bestIndex[0];
  }
}
