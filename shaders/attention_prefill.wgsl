// Causal GQA attention for a step whose R rows all belong to one slot (a prefill or a prefill
// chunk), tiled: workgroup (tile t, kv head g) serves rows t·ROW_TILE … +ROW_TILE−1 for the GROUP
// query heads sharing kv head g — QUERIES = ROW_TILE · GROUP query vectors — and walks keys
// 0 … max pos of its rows in blocks of KEY_BLOCK staged in workgroup memory, so each K/V block is
// read once for all of them. Each row's own position comes from the row table and masks keys
// after it, so positions need not be consecutive (consecutive is the fast case: a tile's rows
// then share almost all keys). The slot is rows[0].x for every row: the caller guarantees it.
// Online softmax per block: (1) one invocation per (query, key) scores; (2) one per query updates
// the running max and sum and turns scores into weights; (3) one per (query, 4 dims) rescales
// acc and adds the weighted values. K/V come through loadK / loadV of the kv_load_*.wgsl this body
// is joined with (f32 or f16 elements), staged in f32.

// Params and bindings: attention_prefill_io.wgsl.

override WG_SIZE: u32 = 128;
override HEAD_DIM: u32 = 64;     // a multiple of 4
override GROUP: u32 = 1;         // query heads per kv head
override ROW_TILE: u32 = 8;
override KEY_BLOCK: u32 = 32;
override D4: u32 = HEAD_DIM / 4u;
override QUERIES: u32 = ROW_TILE * GROUP;   // query vector v = (row t·ROW_TILE + v / GROUP, head g·GROUP + v % GROUP)

const NEG_BIG = -3.0e38;         // masked score / "no key yet": exp(NEG_BIG − m) is 0, never NaN

var<workgroup> qs: array<vec4<f32>, QUERIES * D4>;       // pre-scaled queries
var<workgroup> acc: array<vec4<f32>, QUERIES * D4>;      // each element owned by one invocation
var<workgroup> ks: array<vec4<f32>, KEY_BLOCK * D4>;
var<workgroup> vs: array<vec4<f32>, KEY_BLOCK * D4>;
var<workgroup> weights: array<f32, QUERIES * KEY_BLOCK>; // scores, then exp(score − m)
var<workgroup> runMax: array<f32, QUERIES>;
var<workgroup> runSum: array<f32, QUERIES>;
var<workgroup> rescale: array<f32, QUERIES>;             // exp(m_old − m_new) of the last block

// Position of query vector v's row, or none (rows past R).
fn queryPos(row0: u32, v: u32) -> u32 {
  let r = row0 + v / GROUP;
  return select(0xffffffffu, rows[min(r, params.R - 1u)].y, r < params.R);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row0 = wid.x * ROW_TILE;
  let g = wid.y;
  let slot = rows[0].x;
  let kvHeads = params.nHeads / GROUP;
  var len = 0u;
  var first = 0xffffffffu;   // the lowest key any of the tile's rows sees
  for (var r = row0; r < min(row0 + ROW_TILE, params.R); r++) {
    len = max(len, rows[r].y + 1u);
    first = min(first, select(0u, rows[r].y + 1u - params.window, params.window > 0u && rows[r].y + 1u > params.window));
  }
  len = min(len, params.maxSeq);
  first = min(first, len);

  for (var i = lid; i < QUERIES * D4; i += WG_SIZE) {
    let v = i / D4;
    let r = row0 + v / GROUP;
    var value = vec4<f32>(0.0);
    if (r < params.R) {
      value = q[(r * params.nHeads + g * GROUP + v % GROUP) * D4 + i % D4] * params.scale;
    }
    qs[i] = value;
    acc[i] = vec4<f32>(0.0);
  }
  for (var v = lid; v < QUERIES; v += WG_SIZE) {
    runMax[v] = NEG_BIG;
    runSum[v] = 0.0;
  }

  for (var k0 = first; k0 < len; k0 += KEY_BLOCK) {
    let n = min(KEY_BLOCK, len - k0);
    for (var e = lid; e < n * D4; e += WG_SIZE) {
      let src = ((slot * params.maxSeq + k0 + e / D4) * kvHeads + g) * D4 + e % D4;
      ks[e] = loadK(src);
      vs[e] = loadV(src);
    }
    workgroupBarrier();
    for (var p = lid; p < QUERIES * n; p += WG_SIZE) {
      let v = p / n;
      let j = p % n;
      var s = NEG_BIG;
      let pos = queryPos(row0, v);
      if (k0 + j <= pos && (params.window == 0u || k0 + j + params.window > pos)) {
        s = 0.0;
        for (var c = 0u; c < D4; c++) {
          s += dot(qs[v * D4 + c], ks[j * D4 + c]);
        }
      }
      weights[v * KEY_BLOCK + j] = s;
    }
    workgroupBarrier();
    for (var v = lid; v < QUERIES; v += WG_SIZE) {
      var m = runMax[v];
      for (var j = 0u; j < n; j++) {
        m = max(m, weights[v * KEY_BLOCK + j]);
      }
      var sum = 0.0;
      for (var j = 0u; j < n; j++) {
        let e = exp(weights[v * KEY_BLOCK + j] - m);
        weights[v * KEY_BLOCK + j] = e;
        sum += e;
      }
      let c = exp(runMax[v] - m);
      rescale[v] = c;
      runSum[v] = runSum[v] * c + sum;
      runMax[v] = m;
    }
    workgroupBarrier();
    for (var o = lid; o < QUERIES * D4; o += WG_SIZE) {
      let v = o / D4;
      var a = acc[o] * rescale[v];
      for (var j = 0u; j < n; j++) {
        a += weights[v * KEY_BLOCK + j] * vs[j * D4 + o % D4];
      }
      acc[o] = a;
    }
    workgroupBarrier();
  }

  for (var o = lid; o < QUERIES * D4; o += WG_SIZE) {
    let v = o / D4;
    let r = row0 + v / GROUP;
    if (r < params.R) {
      out[(r * params.nHeads + g * GROUP + v % GROUP) * D4 + o % D4] = acc[o] / runSum[v];
    }
  }
}
