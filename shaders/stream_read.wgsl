// Streaming read roof: each workgroup sums one contiguous chunk of words, its invocations
// lane-interleaved inside the chunk (neighbouring invocations read neighbouring words: coalesced on a
// GPU; on a CPU adapter, where a workgroup's invocations run one SIMD batch after another, each batch
// walks the chunk with a short stride instead of jumping across the whole buffer). Closest in shape
// to what decode does: read every byte once. Wrapping u32 addition keeps the result exact, so the CPU
// can verify it. The parts joined after this body (src/kernels/variant-table.ts) give the bindings
// (stream_read_io), the load width (`Word`, `word_total`: stream_read_vec4 or stream_read_u32) and
// how the sums leave the workgroup (`store_partial`: stream_read_tree or stream_read_lanes).

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.x + wid.y * nwg.x;
  let begin = w * params.chunk;
  let end = min(begin + params.chunk, params.count);
  var acc = Word();
  for (var i = begin + lid * RUN; i < end; i += WG_SIZE * RUN) {
    for (var j = 0u; j < RUN; j++) {
      if (i + j < end) {
        acc += data[i + j];
      }
    }
  }
  store_partial(lid, w, word_total(acc));
}
