// Bindings, input prologue and output epilogue of the linear kernels (matvec*.wgsl, matmul*.wgsl):
// Y = act(X · Wᵀ (+ bias)) (+ Y), X (tokens, cols), W (rows, cols) as GGUF stores it, Y (tokens,
// y_stride). A tensor sharded by rows is one dispatch per shard, each writing its own columns
// y_col0.. of Y; a tensor that is one part of a wider output (Q of a Q|K|V output) writes its
// columns the same way. The weights are bound by the joined weights_*.wgsl at W_BINDING (and
// W_BINDING + 1).
//
// Contract with the kernel bodies:
//  - read X through x_gain(i): the input vector i of a row times the RMSNorm weight (NORM_INPUT);
//  - with NORM_INPUT, sum x·x of each token's raw X row alongside and pass it to input_scale(), whose
//    result 1/rms multiplies the token's dot products before store() — the RMSNorm of the layer's
//    input runs as the prologue of the matvec that reads it, not as its own dispatch;
//  - with GATED, rows come in (gate, up) pairs 2j, 2j+1 (interleaved at upload), and the kernel
//    stores row 2j and then row 2j+1 of a token from the same invocation before that invocation
//    stores another pair of that token (stores of other tokens may come in between).

struct Params {
  rows: u32,         // weight rows (output features) in this shard
  cols: u32,         // input features (a multiple of 4 · CHUNK_VECS)
  tokens: u32,       // rows of X and Y
  y_stride: u32,     // row stride of Y in weight rows: output features of the whole (wider) output
  y_col0: u32,       // first output feature of this shard
  scale_base: u32,   // first u32 word of the f16 scales in the weight buffer (quantized formats)
  eps: f32,          // RMSNorm epsilon (NORM_INPUT)
  split: u32,        // two matrices in one dispatch (linear_q8dot_pair_dots.wgsl): the first's rows; else 0
  scale_base_1: u32, // the second matrix's scale_base
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

const W_BINDING = 5u;
@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;            // (tokens, cols/4)
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;            // (tokens, y_stride), GATED: (tokens, y_stride/2)
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> bias: array<f32>;               // (y_stride); read only when ADD_BIAS
@group(0) @binding(4) var<storage, read> norm_weight: array<vec4<f32>>;  // (cols/4); read only when NORM_INPUT

override ADD_BIAS: bool = false;
override ACCUMULATE: bool = false;   // Y += result (residual fusion)
override NORM_INPUT: bool = false;   // X rows enter RMS-normalised: x / rms(x) · norm_weight
override GATED: bool = false;        // Y[t, j] = act(gate_j) · up_j over (gate, up) row pairs
override ACTIVATION: u32 = 0u;       // GATED: 0 SiLU (Llama, Qwen), 1 GELU-tanh (Gemma)
override X_F16: bool = false;        // products' inputs rounded to f16 (f16 weights: llama.cpp's vec_dot_type)

// The norm weight of input vector i (ones without NORM_INPUT).
fn x_gain(i: u32) -> vec4<f32> {
  if (NORM_INPUT) { return norm_weight[i]; }
  return vec4<f32>(1.0);
}

// x rounded to the nearest f16 value (ties to even; f16's subnormals below 2^-14; no overflow to
// inf), by its bits: lavapipe folds unpack2x16float(pack2x16float(v)).x back to v.x, and shader-f16
// is optional.
fn round_f16(x: vec4<f32>) -> vec4<f32> {
  let b = bitcast<vec4<u32>>(x);
  let normal = bitcast<vec4<f32>>((b + vec4<u32>(0xfffu) + ((b >> vec4<u32>(13u)) & vec4<u32>(1u))) & vec4<u32>(0xffffe000u));
  let subnormal = round(x * 16777216.0) * (1.0 / 16777216.0);
  return select(normal, subnormal, abs(x) < vec4<f32>(6.103515625e-5));
}

// A product's input vector as the weights multiply it: rounded to f16 with X_F16, else itself.
fn product_input(x: vec4<f32>) -> vec4<f32> {
  if (X_F16) { return round_f16(x); }
  return x;
}

// 1/rms of a token's input row from its Σx² (1 without NORM_INPUT).
fn input_scale(sum_sq: f32) -> f32 {
  if (NORM_INPUT) { return inverseSqrt(sum_sq / f32(params.cols) + params.eps); }
  return 1.0;
}

// silu(g) = g / (1 + e^−g); gelu_tanh(g) = g/2 · (1 + tanh(√(2/π)·(g + 0.044715·g³))), with
// tanh(z) = 1 − 2 / (e^{2z} + 1), which saturates to ±1 instead of overflowing to NaN.
fn activation(g: f32) -> f32 {
  if (ACTIVATION == 1u) {
    let z = 0.7978845608028654 * (g + 0.044715 * g * g * g);
    return 0.5 * g * (2.0 - 2.0 / (exp(2.0 * z) + 1.0));
  }
  return g / (1.0 + exp(-g));
}

// The first of the TOKENS rows of X and Y this workgroup computes: the wide matvec's token group
// (grid z, for prompts longer than 8 tokens on GPUs); 0 in the kernels without groups.
var<private> token0: u32;

var<private> pending_gate: array<f32, 8>;   // GATED: the gate of the pair being stored, per token (mod 8)

// Y[t, y_col0 + row] = sum (+ bias) (+ the previous value); GATED pairs write one column per pair.
fn store(t: u32, row: u32, sum: f32) {
  let col = params.y_col0 + row;
  var value = sum;
  if (ADD_BIAS) { value += bias[col]; }
  var index = t * params.y_stride + col;
  if (GATED) {
    if (col % 2u == 0u) {
      pending_gate[t % 8u] = value;
      return;
    }
    value = activation(pending_gate[t % 8u]) * value;
    index = t * (params.y_stride / 2u) + col / 2u;
  }
  if (ACCUMULATE) { value += Y[index]; }
  Y[index] = value;
}
