// Bindings and output of the linear kernels (matvec*.wgsl, matmul*.wgsl): Y = X · Wᵀ (+ bias)
// (+ Y), X (tokens, cols), W (rows, cols) as GGUF stores it, Y (tokens, y_stride). A tensor
// sharded by rows is one dispatch per shard, each writing its own columns y_col0.. of Y.
// The weights are bound by the joined weights_*.wgsl at W_BINDING (and W_BINDING + 1).

struct Params {
  rows: u32,         // weight rows (output features) in this shard
  cols: u32,         // input features (a multiple of 4 · CHUNK_VECS)
  tokens: u32,       // rows of X and Y
  y_stride: u32,     // row stride of Y: output features of the whole tensor
  y_col0: u32,       // first output feature of this shard
  scale_base: u32,   // first u32 word of the f16 scales in the weight buffer (quantized formats)
  _pad0: u32,
  _pad1: u32,
}

const W_BINDING = 4u;
@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;      // (tokens, cols/4)
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;      // (tokens, y_stride)
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> bias: array<f32>;         // (y_stride); read only when ADD_BIAS

override ADD_BIAS: bool = false;
override ACCUMULATE: bool = false;   // Y += result (residual fusion)

// Y[t, y_col0 + row] = sum (+ bias) (+ the previous value).
fn store(t: u32, row: u32, sum: f32) {
  let col = params.y_col0 + row;
  let index = t * params.y_stride + col;
  var value = sum;
  if (ADD_BIAS) { value += bias[col]; }
  if (ACCUMULATE) { value += Y[index]; }
  Y[index] = value;
}
