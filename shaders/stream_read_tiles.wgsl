// Streaming read roof, one workgroup per tile of WG_SIZE · 4 words (thousands of short workgroups in
// one dispatch): each invocation reads 4 words WG_SIZE apart, written out, with no loop and no bounds
// check; the kernel reads whole tiles only (src/kernels/stream-read.ts offers it where the tile
// divides the buffer). SwiftShader pays for any loop or branch here: a one-trip loop over the loads
// read 64 MiB at 0.82 GB/s, the same loads written out 1.41, without the tail's branch as well ~2.3.
// Parts as in stream_read.wgsl (RUN is unused).

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.x + wid.y * nwg.x;
  let i = w * WG_SIZE * 4u + lid;
  let acc = data[i] + data[i + WG_SIZE] + data[i + 2u * WG_SIZE] + data[i + 3u * WG_SIZE];
  store_partial(lid, w, word_total(acc));
}
