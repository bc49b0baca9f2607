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

@compute @workgroup_size(WG_SIZE)
fn fill_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = invocation(gid, nwg); i < params.value_words; i += params.stride) {
    let r = random(params.word_base + i, 0u);
    // Truncating an f32 to its top half rounds toward zero, so |w| ≤ scale holds.
    let lo = bitcast<u32>(signed_unit16(r) * params.scale) >> 16u;
    let hi = bitcast<u32>(signed_unit16(r >> 16u) * params.scale) & 0xffff0000u;
    data[i] = lo | hi;
  }
}

// Random nibble words for `words` words from word w0 of this shard: eight levels each.
fn random_nibbles(w0: u32, words: u32) {
  for (var k = 0u; k < words; k++) { data[w0 + k] = random(params.word_base + w0 + k, 0u); }
}

// Nibble zero → 8, in the words w0.. (q4_1, q4_k: q − 8 symmetric in [−7, 7]).
fn center_nibbles(w0: u32, words: u32) {
  for (var k = 0u; k < words; k++) {
    var word = data[w0 + k];
    for (var j = 0u; j < 8u; j++) {
      if (((word >> (4u * j)) & 15u) == 0u) { word |= 8u << (4u * j); }
    }
    data[w0 + k] = word;
  }
}

// A random fifth-bit word for the 32 weights whose nibbles are the 4 words from q0, with every
// q = 0 made 16 (q − 16 symmetric in [−15, 15]).
fn fifth_bits_word(key: u32, q0: u32) -> u32 {
  var qh = random(params.word_base + key, 2u);
  for (var j = 0u; j < 32u; j++) {
    let nib = (data[q0 + (j & 15u) / 4u] >> (8u * (j & 3u) + select(0u, 4u, j >= 16u))) & 15u;
    if (nib == 0u) { qh |= 1u << j; }
  }
  return qh;
}

// An f16 block scale d = bound·u, u ∈ [0.5, 1), rounded toward zero, for global block b.
fn block_d(b: u32, bound: f32) -> f32 {
  return unpack2x16float(f16_within(bound * (0.75 + 0.25 * signed_unit16(random(b, 1u))), bound)).x;
}

// q4_1 / q5_1 blocks: d|m (m = −offset·d), (qh,) 4 words of nibbles.
fn fill_affine(first: u32, five: bool) {
  let words = select(5u, 6u, five);
  let qmax = select(7.0, 15.0, five);
  for (var i = first; i < params.value_words / words; i += params.stride) {
    let at = i * words;
    let q0 = at + words - 4u;
    random_nibbles(q0, 4u);
    let d = block_d(params.block_base + i, params.scale / qmax);
    if (five) {
      data[at + 1u] = fifth_bits_word(at + 1u, q0);
    } else {
      center_nibbles(q0, 4u);
    }
    data[at] = pack2x16float(vec2<f32>(d, -(qmax + 1.0) * d));
  }
}

@compute @workgroup_size(WG_SIZE)
fn fill_q4_1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  fill_affine(invocation(gid, nwg), false);
}

@compute @workgroup_size(WG_SIZE)
fn fill_q5_1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  fill_affine(invocation(gid, nwg), true);
}

// q5_0 blocks: qh, 4 words of nibbles; d in the scale region.
@compute @workgroup_size(WG_SIZE)
fn fill_q5_0(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = invocation(gid, nwg);
  for (var i = first; i < params.value_words / 5u; i += params.stride) {
    random_nibbles(5u * i + 1u, 4u);
    data[5u * i] = fifth_bits_word(5u * i, 5u * i + 1u);
  }
  fill_scales(first, 15.0);
}

// A K-quant header (q4_k, q5_k): d|dmin and the 12 bytes of sub-block scales sc ∈ [4, 7] and
// mins m = 8·sc, packed as ggml's get_scale_min_k4 reads them.
fn k_header(at: u32, block: u32, bound: f32, dmin_per_d: f32) {
  let d = block_d(block, bound);
  data[at] = pack2x16float(vec2<f32>(d, dmin_per_d * d));
  var bytes: array<u32, 12>;
  let r = random(block, 3u);
  for (var j = 0u; j < 8u; j++) {
    let sc = 4u + ((r >> (2u * j)) & 3u);
    let m = 8u * sc;
    if (j < 4u) {
      bytes[j] |= sc;
      bytes[j + 4u] |= m;
    } else {
      bytes[j + 4u] = (sc & 15u) | ((m & 15u) << 4u);
      bytes[j - 4u] |= (sc >> 4u) << 6u;
      bytes[j] |= (m >> 4u) << 6u;
    }
  }
  for (var w = 0u; w < 3u; w++) {
    data[at + 1u + w] = bytes[4u * w] | (bytes[4u * w + 1u] << 8u) | (bytes[4u * w + 2u] << 16u) | (bytes[4u * w + 3u] << 24u);
  }
}

@compute @workgroup_size(WG_SIZE)
fn fill_q4_k(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = invocation(gid, nwg); i < params.value_words / 36u; i += params.stride) {
    let at = 36u * i;
    k_header(at, params.block_base + i, params.scale / 49.0, 1.0);
    random_nibbles(at + 4u, 32u);
    center_nibbles(at + 4u, 32u);
  }
}

@compute @workgroup_size(WG_SIZE)
fn fill_q5_k(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = invocation(gid, nwg); i < params.value_words / 44u; i += params.stride) {
    let at = 44u * i;
    k_header(at, params.block_base + i, params.scale / 105.0, 2.0);
    random_nibbles(at + 12u, 32u);
    for (var s = 0u; s < 8u; s++) { data[at + 4u + s] = fifth_bits_word(at + 4u + s, at + 12u + 4u * s); }
  }
}

// q6_k super-blocks: 32 words of low nibbles, 16 of high bit pairs (q = 0 made 32), 4 of int8
// scales in [64, 127]; d in the scale region.
@compute @workgroup_size(WG_SIZE)
fn fill_q6_k(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = invocation(gid, nwg);
  for (var i = first; i < params.value_words / 52u; i += params.stride) {
    let at = 52u * i;
    random_nibbles(at, 52u);
    for (var s = 0u; s < 16u; s++) {
      var qh = data[at + 32u + s];
      for (var k = 0u; k < 16u; k++) {
        let low = (data[at + 2u * s + (k & 7u) / 4u] >> (8u * (k & 3u) + select(0u, 4u, k >= 8u))) & 15u;
        if (low == 0u && ((qh >> (2u * k)) & 3u) == 0u) { qh |= 2u << (2u * k); }
      }
      data[at + 32u + s] = qh;
    }
    for (var w = 0u; w < 4u; w++) { data[at + 48u + w] = (data[at + 48u + w] & 0x3f3f3f3fu) | 0x40404040u; }
  }
  fill_scales(first, 31.0 * 127.0);
}
