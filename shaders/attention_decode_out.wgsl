// What every decode attention variant shares (attention_decode.wgsl, attention_decode_subgroups.wgsl,
// each with attention_decode_io.wgsl or the fused attention_decode_rope_io.wgsl): the row table, where
// results go, and which keys a workgroup takes.
//
// Workgroup (split s, kv head g, row r) takes keys [first + s·chunk, first + (s+1)·chunk) ∩ [first, len)
// of the row's slot, with len = pos_r + 1, first = 0 (or len − window under a sliding window) and
// chunk = max(ceil((len − first) / splits), minChunk): a context shorter than splits · minChunk keys
// leaves the last splits empty (they write an empty partial), so one recorded grid serves every
// context length. With one split (params.splits == 1) the workgroup writes the normalised output
// itself and no combine pass runs; else it writes one unnormalised partial per query head (running
// max m, sum l = Σ exp(score − m), acc = Σ exp(score − m) · v), merged by attention_combine.wgsl.

@group(0) @binding(3) var<storage, read> rows: array<vec2<u32>>;             // (R): (slot, pos)
@group(0) @binding(4) var<storage, read_write> partAcc: array<vec4<f32>>;    // (R, nHeads, splits, HEAD_DIM/4)
@group(0) @binding(5) var<storage, read_write> partMl: array<vec2<f32>>;     // (R, nHeads, splits): (m, l)
@group(0) @binding(7) var<storage, read_write> out: array<vec4<f32>>;        // (R, nHeads, HEAD_DIM/4)

// [kBegin, kEnd) of split `split` for row r (see above).
fn key_range(split: u32, r: u32) -> vec2<u32> {
  let len = min(rows[r].y + 1u, params.maxSeq);
  var first = 0u;
  if (params.window > 0u && len > params.window) { first = len - params.window; }
  let chunk = max((len - first + params.splits - 1u) / params.splits, params.minChunk);
  let kBegin = min(first + split * chunk, len);
  return vec2<u32>(kBegin, min(kBegin + chunk, len));
}

// Dims 4i…4i+3 of query head `head` (row-major over (R, nHeads)): the output (one split), else this split's partial.
fn write_result(head: u32, split: u32, i: u32, acc: vec4<f32>, m: f32, l: f32) {
  if (params.splits == 1u) {
    out[head * (HEAD_DIM / 4u) + i] = acc / l;
    return;
  }
  let part = head * params.splits + split;
  partAcc[part * (HEAD_DIM / 4u) + i] = acc;
  if (i == 0u) { partMl[part] = vec2<f32>(m, l); }
}
