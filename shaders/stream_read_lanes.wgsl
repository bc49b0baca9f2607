// The streaming read's per-invocation sums: each invocation writes its own partial, no barrier (what
// CPU adapters need for thousands of short workgroups). One u32 per WG_SIZE · RUN words read.
fn store_partial(lid: u32, w: u32, s: u32) {
  partials[w * WG_SIZE + lid] = s;
}
