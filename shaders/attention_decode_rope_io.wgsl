// The decode attention's inputs with RoPE and the KV-cache store fused in (decode steps whose rows
// are distinct sequences: the engine's 'distinct' layout): the Q|K|V projection as it came out of
// the linear, RoPE's frequencies, the optional per-head norms, and the cache read-write (a
// kv_rw_*.wgsl joins bindings 1 and 2). Each workgroup rotates its group's queries itself (a few
// hundred values); the one workgroup whose keys include the row's own position also rotates the
// new key and stores it and the new value into the cache at (slot, pos), then reads them back with
// every other key. Same rotation as rope_store.wgsl (pairs (2i, 2i+1), or (i, i + ropeDim/2) with
// NEOX; dims ≥ ropeDim pass through; angle = f32(pos) · invFreq[i]; optional RMSNorm of each q
// and k head over headDim first), so the cache holds the same bytes either way.

struct Params {
  nHeads: u32,
  maxSeq: u32,
  splits: u32,     // workgroups per (row, kv head)
  scale: f32,      // 1 / sqrt(headDim)
  window: u32,     // sliding window: keys pos−window+1…pos; 0 = all keys 0…pos
  minChunk: u32,   // fewest keys a split takes
  half: u32,       // ropeDim / 2
  eps: f32,        // HEAD_NORM epsilon
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;              // (R, (nHeads + 2·nKvHeads)·HEAD_DIM), not rotated
@group(0) @binding(6) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read> invFreq: array<f32>;          // (ropeDim/2)
@group(0) @binding(9) var<storage, read> qNorm: array<f32>;            // (HEAD_DIM); read only when HEAD_NORM
@group(0) @binding(10) var<storage, read> kNorm: array<f32>;           // (HEAD_DIM); read only when HEAD_NORM

override NEOX: bool = false;
override HEAD_NORM: bool = false;

const MAX_HEADS = 17u;                                         // GROUP query heads and the key (GROUP ≤ 16)

var<workgroup> raw: array<f32, (GROUP + 1u) * HEAD_DIM>;      // the group's q heads, then the k head, as projected
var<workgroup> normScale: array<f32, MAX_HEADS>;              // 1 / rms of each (HEAD_NORM)

// Value d of head h of `raw` (h = GROUP: the key), normalised with its weights under HEAD_NORM.
fn raw_value(h: u32, d: u32) -> f32 {
  var x = raw[h * HEAD_DIM + d];
  if (HEAD_NORM) { x *= normScale[h] * select(qNorm[d], kNorm[d], h == GROUP); }
  return x;
}

// Dim d of head h of `raw`, rotated to position pos with its RoPE partner (or passed through).
fn rotated_value(h: u32, d: u32, pos: u32) -> f32 {
  if (d >= 2u * params.half) { return raw_value(h, d); }
  var i = d / 2u;
  var a = 2u * i;
  var b = a + 1u;
  if (NEOX) {
    i = d % params.half;
    a = i;
    b = i + params.half;
  }
  let cs = cosSin(f32(pos) * invFreq[i]);
  let x0 = raw_value(h, a);
  let x1 = raw_value(h, b);
  if (d == a) { return x0 * cs.x - x1 * cs.y; }
  return x0 * cs.y + x1 * cs.x;
}

fn rotated4(h: u32, c: u32, pos: u32) -> vec4<f32> {
  return vec4<f32>(rotated_value(h, 4u * c, pos), rotated_value(h, 4u * c + 1u, pos), rotated_value(h, 4u * c + 2u, pos), rotated_value(h, 4u * c + 3u, pos));
}

// The GROUP rotated queries of kv head g of row r, pre-scaled, into qs; and, in the workgroup whose
// keys include pos, the rotated key and the value into the cache. Call from uniform control flow; a
// workgroupBarrier must follow.
fn load_queries(lid: u32, r: u32, g: u32, kBegin: u32, kEnd: u32) {
  let kvHeads = params.nHeads / GROUP;
  let stride = (params.nHeads + 2u * kvHeads) * HEAD_DIM;
  let slot = rows[r].x;
  let pos = rows[r].y;
  let qSrc = r * stride + g * GROUP * HEAD_DIM;
  let kSrc = r * stride + (params.nHeads + g) * HEAD_DIM;
  for (var i = lid; i < GROUP * HEAD_DIM; i += WG_SIZE) { raw[i] = qkv[qSrc + i]; }
  for (var d = lid; d < HEAD_DIM; d += WG_SIZE) { raw[GROUP * HEAD_DIM + d] = qkv[kSrc + d]; }
  workgroupBarrier();
  if (HEAD_NORM) {
    for (var h = lid; h <= GROUP; h += WG_SIZE) {
      var sum = 0.0;
      for (var d = 0u; d < HEAD_DIM; d++) {
        let x = raw[h * HEAD_DIM + d];
        sum += x * x;
      }
      normScale[h] = inverseSqrt(sum / f32(HEAD_DIM) + params.eps);
    }
    workgroupBarrier();
  }
  for (var i = lid; i < GROUP * D4; i += WG_SIZE) { qs[i] = rotated4(i / D4, i % D4, pos) * params.scale; }
  if (kBegin <= pos && pos < kEnd) {
    let dst = ((slot * params.maxSeq + pos) * kvHeads + g) * D4;
    let vSrc = r * stride + (params.nHeads + kvHeads + g) * HEAD_DIM;
    for (var c = lid; c < D4; c += WG_SIZE) {
      storeK4(dst + c, rotated4(GROUP, c, pos));
      storeV4(dst + c, vec4<f32>(qkv[vSrc + 4u * c], qkv[vSrc + 4u * c + 1u], qkv[vSrc + 4u * c + 2u], qkv[vSrc + 4u * c + 3u]));
    }
  }
  // This workgroup reads the key and value it stored: make the stores visible to it.
  storageBarrier();
}
