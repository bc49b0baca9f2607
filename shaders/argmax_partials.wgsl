// Greedy sampling, pass one of two (argmax_merge.wgsl is pass two): workgroup (c, r) takes chunk c
// of row r's logits — CHUNK consecutive ids — and writes the chunk's largest value and the lowest
// id holding it. Many workgroups per row keep a GPU busy on a 128k vocabulary, where one workgroup
// per row would read half a megabyte alone. Rows with fewer logits than a chunk use argmax.wgsl.

struct Params {
  vocab: u32,
  chunk: u32,    // logits per workgroup
  chunks: u32,   // ceil(vocab / chunk)
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;              // (R, vocab)
@group(0) @binding(1) var<storage, read_write> partials: array<u32>;      // (R, chunks, 2): value bits, id
@group(0) @binding(2) var<uniform> params: Params;

override WG_SIZE: u32 = 256;   // a power of two

// NONE, bestValue/bestIndex, ahead() and bestOfWorkgroup() come from argmax_tree.wgsl.

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wid.x;
  let r = wid.y;
  let base = r * params.vocab;
  let start = c * params.chunk;
  let end = min(start + params.chunk, params.vocab);
  var v = 0.0;
  var i = NONE;
  for (var t = start + lid; t < end; t += WG_SIZE) {
    let l = logits[base + t];
    if (i == NONE || l > v) {
      v = l;
      i = t;
    }
  }
  bestOfWorkgroup(lid, v, i);
  if (lid == 0u) {
    let p = 2u * (r * params.chunks + c);
    partials[p] = bitcast<u32>(bestValue[0]);
    partials[p + 1u] = bestIndex[0];
  }
}
