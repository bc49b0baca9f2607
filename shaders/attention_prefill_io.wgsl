// The prefill attention kernels' binding contract (attention_prefill.wgsl, the tiled GPU kernel, and
// attention_prefill_rows.wgsl, the CPU adapters'), joined after either body: all R rows of the step
// belong to one slot (rows[0].x); each row's position masks its keys.

struct Params {
  R: u32,
  nHeads: u32,
  maxSeq: u32,
  scale: f32,      // 1 / sqrt(headDim)
  window: u32,     // sliding window: keys pos−window+1…pos; 0 = all keys 0…pos
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> q: array<vec4<f32>>;              // (R, nHeads, HEAD_DIM/4)
// bindings 1 and 2 (kCache, vCache) and loadK / loadV: kv_load_f32.wgsl or kv_load_f16.wgsl
@group(0) @binding(3) var<storage, read> rows: array<vec2<u32>>;           // (R): (slot, pos), one slot
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;      // (R, nHeads, HEAD_DIM/4)
@group(0) @binding(5) var<uniform> params: Params;
