// Weight-format library: f32 (see src/kernels/weights.ts for the packed layout).
// Joined after a kernel body that defines W_BINDING and `params` with `cols`; a chunk is the unit
// one invocation loads: CHUNK_VECS vec4s of consecutive weights of one row, whose values are
// w_quants · w_scale + w_bias (the matvec applies scale and bias once per chunk).

@group(0) @binding(W_BINDING) var<storage, read> W: array<vec4<f32>>;   // (rows, cols/4)

const CHUNK_VECS = 1u;
alias WRaw = vec4<f32>;

// Chunk c (weights 4c..4c+3) of `row`, as loaded.
fn w_raw(row: u32, c: u32) -> WRaw {
  return W[row * (params.cols / 4u) + c];
}

// Weight value = w_quants · w_scale + w_bias; f32 weights are their own quants.
const W_HAS_BIAS = false;

fn w_quants(raw: WRaw, v: u32) -> vec4<f32> {
  return raw;
}

fn w_scale(raw: WRaw) -> f32 {
  return 1.0;
}

fn w_bias(raw: WRaw) -> f32 {
  return 0.0;
}

// Weights 4v..4v+3 of a loaded chunk.
fn w_dequant(raw: WRaw, v: u32) -> vec4<f32> {
  return raw;
}
