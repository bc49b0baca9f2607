// RoPE and the KV-cache store in one pass over a step's fused Q|K|V output (R, nHeads + 2·nKvHeads
// heads of headDim). Workgroup (head hh, row group) walks rows r = wid.y, wid.y + nwg.y, …:
//  - q heads (hh < nHeads): rotated into q (R, nHeads·headDim) for attention;
//  - k heads: rotated into kCache at the row's (slot, pos); v heads: copied into vCache there.
// With HEAD_NORM, q and k heads are first RMS-normalised over headDim with their weights (qNorm,
// kNorm: Qwen3 and Gemma 3 Q/K norm), a tree reduction in workgroup memory.
// Pair i of a head is (x[2i], x[2i+1]) for NEOX = false (llama.cpp NORM, llama2.c) or (x[i],
// x[i + ropeDim/2]) for NEOX = true (Qwen2); dims ≥ ropeDim pass through. angle = f32(pos) ·
// invFreq[i] is one correctly rounded f32 multiply, so it equals the CPU's Math.fround(pos · f)
// bit for bit; the table comes from the host (ropeInvFreq in src/model/rope.ts), so RoPE scaling
// and per-layer bases never touch this shader; cos and sin come from rope_math.wgsl's cosSin.
// Rows outside the cache (slot ≥ slots or pos ≥ maxSeq) store no K/V. Each invocation writes
// pairs of adjacent output dims (2j, 2j+1), the unit kv_store_f16.wgsl packs into one u32.

struct Params {
  R: u32,
  nHeads: u32,
  nKvHeads: u32,
  headDim: u32,
  half: u32,       // ropeDim / 2
  maxSeq: u32,
  slots: u32,
  eps: f32,        // HEAD_NORM epsilon
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;              // (R, (nHeads + 2·nKvHeads)·headDim)
@group(0) @binding(1) var<storage, read> rows: array<vec2<u32>>;       // (R): (slot, pos)
@group(0) @binding(2) var<storage, read> invFreq: array<f32>;          // (ropeDim/2)
@group(0) @binding(3) var<storage, read> qNorm: array<f32>;            // (headDim); read only when HEAD_NORM
@group(0) @binding(4) var<storage, read> kNorm: array<f32>;            // (headDim); read only when HEAD_NORM
@group(0) @binding(5) var<storage, read_write> q: array<f32>;          // (R, nHeads·headDim)
// bindings 6 and 7 (kCache, vCache) and storeK / storeV: kv_store_f32.wgsl or kv_store_f16.wgsl
@group(0) @binding(8) var<uniform> params: Params;

override WG_SIZE: u32 = 64;      // a power of two
override NEOX: bool = false;
override HEAD_NORM: bool = false;

var<workgroup> partial: array<f32, WG_SIZE>;

// Head value d of the source head at `src`, normalised (HEAD_NORM) with `scale` and the weights.
fn headValue(src: u32, d: u32, isQ: bool, scale: f32) -> f32 {
  var x = qkv[src + d];
  if (HEAD_NORM) { x *= scale * select(kNorm[d], qNorm[d], isQ); }
  return x;
}

// Output dim d of the head at `src`: rotated with its RoPE partner, or passed through (d ≥ ropeDim).
fn rotated(src: u32, d: u32, pos: u32, isQ: bool, scale: f32) -> f32 {
  if (d >= 2u * params.half) { return headValue(src, d, isQ, scale); }
  var i = d / 2u;
  var a = 2u * i;
  var b = a + 1u;
  if (NEOX) {
    i = d % params.half;
    a = i;
    b = i + params.half;
  }
  let cs = cosSin(f32(pos) * invFreq[i]);
  let x0 = headValue(src, a, isQ, scale);
  let x1 = headValue(src, b, isQ, scale);
  if (d == a) { return x0 * cs.x - x1 * cs.y; }
  return x0 * cs.y + x1 * cs.x;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let hh = wid.x;
  let D = params.headDim;
  let kvDim = params.nKvHeads * D;
  let stride = params.nHeads * D + 2u * kvDim;
  let isQ = hh < params.nHeads;
  let isV = hh >= params.nHeads + params.nKvHeads;
  for (var r = wid.y; r < params.R; r += nwg.y) {
    let src = r * stride + hh * D;
    let slot = rows[r].x;
    let pos = rows[r].y;
    let cached = slot < params.slots && pos < params.maxSeq;
    let cachePair = (slot * params.maxSeq + pos) * kvDim / 2u;   // the row's first (2i, 2i+1) pair
    if (isV) {
      if (cached) {
        let dst = cachePair + (hh - params.nHeads - params.nKvHeads) * D / 2u;
        for (var j = lid; j < D / 2u; j += WG_SIZE) { storeV(dst + j, vec2<f32>(qkv[src + 2u * j], qkv[src + 2u * j + 1u])); }
      }
      continue;
    }
    var scale = 1.0;
    if (HEAD_NORM) {
      var sum = 0.0;
      for (var d = lid; d < D; d += WG_SIZE) {
        let x = qkv[src + d];
        sum += x * x;
      }
      partial[lid] = sum;
      for (var s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
        workgroupBarrier();
        if (lid < s) { partial[lid] += partial[lid + s]; }
      }
      workgroupBarrier();
      scale = inverseSqrt(partial[0] / f32(D) + params.eps);
      workgroupBarrier();   // partial is rewritten for the next row
    }
    if (isQ) {
      let dst = r * params.nHeads * D + hh * D;
      for (var d = lid; d < D; d += WG_SIZE) { q[dst + d] = rotated(src, d, pos, true, scale); }
    } else if (cached) {
      let dst = cachePair + (hh - params.nHeads) * D / 2u;
      for (var j = lid; j < D / 2u; j += WG_SIZE) {
        storeK(dst + j, vec2<f32>(rotated(src, 2u * j, pos, false, scale), rotated(src, 2u * j + 1u, pos, false, scale)));
      }
    }
  }
}
