// Launch roof: the smallest dependent dispatch. One invocation adds 1 to a counter that the next
// dispatch reads, so WebGPU must order every dispatch after the one before (as a decode step's
// kernels are): the time per dispatch is the fixed cost of a launch, not of any work.

@group(0) @binding(0) var<storage, read_write> counter: array<u32>;   // (1)

@compute @workgroup_size(1)
fn main() {
  counter[0] = counter[0] + 1u;
}
