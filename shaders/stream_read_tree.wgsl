// The streaming read's workgroup sum: a tree in workgroup memory, one partial per workgroup. Cheap
// on GPUs; on CPU adapters each barrier switches every invocation, which thousands of workgroups pay.
var<workgroup> scratch: array<u32, WG_SIZE>;

fn store_partial(lid: u32, w: u32, s: u32) {
  scratch[lid] = s;
  workgroupBarrier();
  for (var k = WG_SIZE / 2u; k > 0u; k >>= 1u) {
    if (lid < k) {
      scratch[lid] += scratch[lid + k];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    partials[w] = scratch[0];
  }
}
