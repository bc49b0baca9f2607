// Causal GQA attention for rows of any slots and positions, split across the context
// ("flash-decoding") where a step asks for it. Workgroup (split s, kv head g, row r) serves the GROUP
// query heads that share kv head g, over the keys attention_decode_out.wgsl's key_range gives it,
// and writes the output (one split) or its partial (write_result; attention_combine.wgsl merges
// the splits). Per block of keys: (1) one invocation per (head, key) scores q·k; (2) one per head
// updates m and l and turns scores into weights; (3) one per (head, 4 dims) rescales acc and adds
// the weighted values. K and V are read once per kv head, through loadK / loadV of the kv part this
// body is joined with (f32 or f16 elements). The queries come from load_queries:
// attention_decode_io.wgsl (rotated apart) or attention_decode_rope_io.wgsl (RoPE and the cache
// store fused in).

// Params, bindings and load_queries: attention_decode_io.wgsl or attention_decode_rope_io.wgsl.

override WG_SIZE: u32 = 128;
override HEAD_DIM: u32 = 64;     // a multiple of 4
override GROUP: u32 = 1;         // query heads per kv head
override KEY_BLOCK: u32 = 32;
override D4: u32 = HEAD_DIM / 4u;

const NEG_BIG = -3.0e38;         // "no key yet": finite, so exp(NEG_BIG − m) is 0, never NaN

var<workgroup> qs: array<vec4<f32>, GROUP * D4>;         // the group's queries, pre-scaled
var<workgroup> acc: array<vec4<f32>, GROUP * D4>;        // each element owned by one invocation
var<workgroup> weights: array<f32, GROUP * KEY_BLOCK>;   // scores, then exp(score − m)
var<workgroup> runMax: array<f32, GROUP>;
var<workgroup> runSum: array<f32, GROUP>;
var<workgroup> rescale: array<f32, GROUP>;               // exp(m_old − m_new) of the last block

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let split = wid.x;
  let g = wid.y;
  let r = wid.z;
  let slot = rows[r].x;
  let range = key_range(split, r);
  let kBegin = range.x;
  let kEnd = range.y;
  let kvHeads = params.nHeads / GROUP;
  let head0 = r * params.nHeads + g * GROUP;   // (row, first query head of the group)

  load_queries(lid, r, g, kBegin, kEnd);
  for (var i = lid; i < GROUP * D4; i += WG_SIZE) { acc[i] = vec4<f32>(0.0); }
  for (var h = lid; h < GROUP; h += WG_SIZE) {
    runMax[h] = NEG_BIG;
    runSum[h] = 0.0;
  }
  workgroupBarrier();

  for (var k0 = kBegin; k0 < kEnd; k0 += KEY_BLOCK) {
    let n = min(KEY_BLOCK, kEnd - k0);
    for (var p = lid; p < GROUP * n; p += WG_SIZE) {
      let h = p / n;
      let j = p % n;
      let kBase = ((slot * params.maxSeq + k0 + j) * kvHeads + g) * D4;
      var s = 0.0;
      for (var c = 0u; c < D4; c++) {
        s += dot(qs[h * D4 + c], loadK(kBase + c));
      }
      weights[h * KEY_BLOCK + j] = s;
    }
    workgroupBarrier();
    for (var h = lid; h < GROUP; h += WG_SIZE) {
      var m = runMax[h];
      for (var j = 0u; j < n; j++) {
        m = max(m, weights[h * KEY_BLOCK + j]);
      }
      var sum = 0.0;
      for (var j = 0u; j < n; j++) {
        let e = exp(weights[h * KEY_BLOCK + j] - m);
        weights[h * KEY_BLOCK + j] = e;
        sum += e;
      }
      let c = exp(runMax[h] - m);
      rescale[h] = c;
      runSum[h] = runSum[h] * c + sum;
      runMax[h] = m;
    }
    workgroupBarrier();
    for (var o = lid; o < GROUP * D4; o += WG_SIZE) {
      let h = o / D4;
      let vBase = (slot * params.maxSeq + k0) * kvHeads * D4 + g * D4 + o % D4;
      var a = acc[o] * rescale[h];
      for (var j = 0u; j < n; j++) {
        a += weights[h * KEY_BLOCK + j] * loadV(vBase + j * kvHeads * D4);
      }
      acc[o] = a;
    }
    workgroupBarrier();
  }

  for (var o = lid; o < GROUP * D4; o += WG_SIZE) {
    let h = o / D4;
    write_result(head0 + h, split, o % D4, acc[o], runMax[h], runSum[h]);
  }
}
