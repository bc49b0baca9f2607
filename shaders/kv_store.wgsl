// Append a step's keys and values to the KV cache: row r of k and v goes to (slot, pos) of
// rows[r] in kCache and vCache (grid-stride over R · kvDim). Rows outside the cache (slot ≥ slots
// or pos ≥ maxSeq) are skipped rather than written out of place.

struct Params {
  count: u32,      // R · kvDim
  stride: u32,     // invocations in the grid
  kvDim: u32,      // nKvHeads · headDim
  maxSeq: u32,
  slots: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> k: array<f32>;                // (R, kvDim)
@group(0) @binding(1) var<storage, read> v: array<f32>;                // (R, kvDim)
@group(0) @binding(2) var<storage, read> rows: array<vec2<u32>>;       // (R): (slot, pos)
@group(0) @binding(3) var<storage, read_write> kCache: array<f32>;     // (slots, maxSeq, kvDim)
@group(0) @binding(4) var<storage, read_write> vCache: array<f32>;     // (slots, maxSeq, kvDim)
@group(0) @binding(5) var<uniform> params: Params;

override WG_SIZE: u32 = 256;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = gid.x + gid.y * nwg.x * WG_SIZE; i < params.count; i += params.stride) {
    let row = rows[i / params.kvDim];
    if (row.x < params.slots && row.y < params.maxSeq) {
      let dst = (row.x * params.maxSeq + row.y) * params.kvDim + i % params.kvDim;
      kCache[dst] = k[i];
      vCache[dst] = v[i];
    }
  }
}
