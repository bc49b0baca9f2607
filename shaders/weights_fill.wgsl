// Synthetic weights, written on the GPU straight into the packed layout of src/kernels/weights.ts
// (one entry point per format). Every random number is keyed by the word's or block's index in
// the whole tensor, so a tensor is the same however it is sharded. Values lie in [-scale, scale]
// with mean 0; f16 values and scales are rounded toward zero where nearest would exceed the bound.

struct Params {
  value_words: u32,   // u32 words of values (quants) in this shard
  scale_words: u32,   // u32 words of packed f16 scales after them (quantized formats)
  word_base: u32,     // index of this shard's first value word in the whole tensor
  block_base: u32,    // index of this shard's first 32-weight block in the whole tensor
  seed: u32,
  scale: f32,         // bound on |w|
  stride: u32,        // invocations in the grid (grid-stride loops)
  _pad: u32,
}

@group(0) @binding(0) var<storage, read_write> data: array<u32>;   // (value_words + scale_words)
@group(0) @binding(1) var<uniform> params: Params;

override WG_SIZE: u32 = 64;

// Chris Wellons' lowbias32: a full-avalanche 32-bit integer hash.
fn hash(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

// Independent streams for values and scales.
fn random(index: u32, stream: u32) -> u32 {
  return hash(index + hash(params.seed ^ stream));
}

// A u32 → uniform [-1, 1) with 16 bits of resolution (enough for f16).
fn signed_unit16(bits: u32) -> f32 {
  return f32(bits & 0xffffu) / 32768.0 - 1.0;
}

// The f16 bits of v (|v| ≥ 0), moved one step toward zero if rounding to nearest exceeded `limit`.
fn f16_within(v: f32, limit: f32) -> u32 {
  var bits = pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu;
  if (abs(unpack2x16float(bits).x) > limit) { bits -= 1u; }
  return bits;
}

fn invocation(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG_SIZE;
}

// Block scales: d = scale / qmax · u, u ∈ [0.5, 1), two f16 per word.
fn fill_scales(first: u32, qmax: f32) {
  let bound = params.scale / qmax;
  for (var i = first; i < params.scale_words; i += params.stride) {
    let b = params.block_base + 2u * i;
    let d0 = f16_within(bound * (0.75 + 0.25 * signed_unit16(random(b, 1u))), bound);
    let d1 = f16_within(bound * (0.75 + 0.25 * signed_unit16(random(b + 1u, 1u))), bound);
    data[params.value_words + i] = d0 | (d1 << 16u);
  }
}

@compute @workgroup_size(WG_SIZE)
fn fill_f32(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = invocation(gid, nwg); i < params.value_words; i += params.stride) {
    let u = f32(random(params.word_base + i, 0u) >> 8u) / 8388608.0 - 1.0;
    data[i] = bitcast<u32>(u * params.scale);
  }
}

@compute @workgroup_size(WG_SIZE)
fn fill_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = invocation(gid, nwg); i < params.value_words; i += params.stride) {
    let r = random(params.word_base + i, 0u);
    let lo = signed_unit16(r) * params.scale;
    let hi = signed_unit16(r >> 16u) * params.scale;
    data[i] = (f16_within(abs(lo), params.scale) | select(0u, 0x8000u, lo < 0.0))
      | ((f16_within(abs(hi), params.scale) | select(0u, 0x8000u, hi < 0.0)) << 16u);
  }
}

// Quant words of a block format, then its scales. q8_0 (nibbles false): four int8, the byte 0x80
// (−128) made 0 so values are symmetric in [−127, 127]. q4_0: eight nibbles, nibble 0 (value −8)
// made 8 (value 0) so q − 8 is symmetric in [−7, 7].
fn fill_blocks(first: u32, nibbles: bool) {
  let bits = select(8u, 4u, nibbles);
  let mask = select(0xffu, 0xfu, nibbles);
  let symmetric = select(0x80u, 0u, nibbles);
  let zero = select(0u, 8u, nibbles);
  for (var i = first; i < params.value_words; i += params.stride) {
    var word = random(params.word_base + i, 0u);
    for (var j = 0u; j < 32u / bits; j++) {
      if (((word >> (bits * j)) & mask) == symmetric) { word = (word & ~(mask << (bits * j))) | (zero << (bits * j)); }
    }
    data[i] = word;
  }
  fill_scales(first, select(127.0, 7.0, nibbles));
}

@compute @workgroup_size(WG_SIZE)
fn fill_q8_0(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  fill_blocks(invocation(gid, nwg), false);
}

@compute @workgroup_size(WG_SIZE)
fn fill_q4_0(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  fill_blocks(invocation(gid, nwg), true);
}
