/**
 * Results for the share tests, built with the real summary functions from seeded random timings:
 * a small one (one prompt length, a few requests) and a realistic large one (the full sweep's four
 * prompt lengths × 25 requests × 128 output tokens, per-step GPU times, 50 samples per roof, a
 * kernel profile), and a full one with every section the renderers read.
 */
import { findPreset } from '../../../src/model/catalog.ts';
import type { LatencySection } from '../../../src/measure/latency.ts';
import {
  depthCurve,
  kernelBreakdown,
  latencyRow,
  phaseVerdicts,
  timingOf,
  type KernelSample,
  type LengthCosts,
  type RequestRecord,
  type Roofs,
} from '../../../src/measure/latency-summary.ts';
import { latencyStats } from '../../../src/measure/metrics.ts';
import { newResult, type BenchResult, type CeilingMeasurement, type Ceilings } from '../../../src/measure/schema.ts';
import type { ModelInfo } from '../../../src/model/load.ts';
import { verdict } from '../../../src/measure/roofline.ts';
import { serveResult } from '../../../src/serve/metrics.ts';
import { mulberry32 } from '../../../src/serve/workload.ts';

// f16 faster than f32, as on a GPU: the compute roof is the f16 FMA peak (computeRoof).
export const ROOFS: Roofs = { read_bandwidth_gbps: 412.5, f32_gflops: 21000, f16_gflops: 40000, matmul_f32_gflops: 9876.5 };

export function environment(): BenchResult['environment'] {
  return {
    runtime: 'browser',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    adapter: { vendor: 'nvidia', architecture: 'ada', device: '', description: 'NVIDIA GeForce RTX 4070', isFallbackAdapter: false },
    features: ['timestamp-query', 'shader-f16', 'subgroups'],
    limits: {
      maxBufferSize: 4294967296,
      maxStorageBufferBindingSize: 2147483648,
      maxComputeWorkgroupStorageSize: 32768,
      maxComputeInvocationsPerWorkgroup: 1024,
      maxComputeWorkgroupSizeX: 1024,
      maxComputeWorkgroupSizeY: 1024,
      maxComputeWorkgroupsPerDimension: 65535,
      maxStorageBuffersPerShaderStage: 10,
      maxUniformBufferBindingSize: 65536,
    },
    disabled_features: [],
    cpu_adapter: false,
  };
}

function measurement(value: number, unit: CeilingMeasurement['unit'], n: number, random: () => number): CeilingMeasurement {
  const samples = Array.from({ length: n }, () => value * (0.95 + 0.1 * random()));
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    value: sorted[n >> 1],
    unit,
    min: sorted[0],
    max: sorted[n - 1],
    samples,
    n,
    clock: 'gpu-timestamp',
    work_per_rep: 268435456,
    shape: '1024 workgroups × 256',
    verified: true,
  };
}

export function ceilings(samplesPerRoof: number, seed = 1): Ceilings {
  const random = mulberry32(seed);
  const m = {
    read_bandwidth_gbps: measurement(ROOFS.read_bandwidth_gbps, 'GB/s', samplesPerRoof, random),
    copy_bandwidth_gbps: measurement(380.25, 'GB/s', samplesPerRoof, random),
    copy_buffer_to_buffer_gbps: measurement(401.125, 'GB/s', samplesPerRoof, random),
    f32_gflops: measurement(ROOFS.f32_gflops, 'GFLOP/s', samplesPerRoof, random),
    matmul_f32_gflops: measurement(ROOFS.matmul_f32_gflops, 'GFLOP/s', samplesPerRoof, random),
    f16_gflops: measurement(ROOFS.f16_gflops!, 'GFLOP/s', samplesPerRoof, random),
    // Below the f32 GEMM (as on a GPU's numbers), so ROOFS' prefill GEMM roof stays the rows' one.
    matmul_q8_gflops: measurement(7654.25, 'GFLOP/s', samplesPerRoof, random),
  };
  return {
    read_bandwidth_gbps: m.read_bandwidth_gbps.value,
    copy_bandwidth_gbps: m.copy_bandwidth_gbps.value,
    copy_buffer_to_buffer_gbps: m.copy_buffer_to_buffer_gbps.value,
    f32_gflops: m.f32_gflops.value,
    matmul_f32_gflops: m.matmul_f32_gflops.value,
    f16_gflops: m.f16_gflops.value,
    matmul_q8_gflops: m.matmul_q8_gflops.value,
    working_set_bytes: 268435456,
    measurements: m,
  };
}

export const MODEL: ModelInfo = {
  id: 'llama-3.2-1b',
  name: 'Llama-3.2-1B',
  architecture: 'llama',
  parameters: 1235814400,
  weight_bytes: 700_000_000,
  quantization: 'q4_0',
  synthetic: true,
  label: 'synthetic weights — speed only',
  config: findPreset('llama-3.2-1b')!.config,
};

const costsOf = (P: number): LengthCosts => ({
  prefill: { flops: 2.4e9 * P, bytes: 7e8 + 3e5 * P },
  decodeStep: { flops: 2.4e9, bytes: 7e8 + 32768 * (P + 64) },
});

function request(P: number, gen: number, rep: number, random: () => number): RequestRecord {
  const ttft = 0.4 * P + 20 + 5 * random();
  const token_ms = [ttft];
  const gpu_decode_ms: number[] = [];
  for (let i = 1; i < gen; i++) {
    const gpu = 1.7 + 0.0001 * (P + i) + 0.05 * random();
    gpu_decode_ms.push(gpu);
    token_ms.push(token_ms[i - 1] + gpu + 0.3 + 0.2 * random());
  }
  return { prompt_tokens: P, output_tokens: gen, rep, token_ms, gpu_prefill_ms: ttft - 2, gpu_decode_ms, disturbed: false };
}

const KERNEL_CLASSES = ['matvec', 'attention', 'norm', 'rope', 'elementwise', 'embedding', 'sampling'] as const;

/** A latency sweep over `lengths` with `reps` requests of `gen` tokens each. */
export function latency(lengths: number[], reps: number, gen: number, seed = 7): LatencySection {
  const random = mulberry32(seed);
  const requests = lengths.flatMap((P) => Array.from({ length: reps }, (_, rep) => request(P, gen, rep, random)));
  const rows = lengths.map((P) =>
    latencyRow(
      requests.filter((r) => r.prompt_tokens === P),
      costsOf(P),
      ROOFS,
    ),
  );
  const samples: KernelSample[] = KERNEL_CLASSES.flatMap((kind, k) =>
    Array.from({ length: 8 }, (_, step) => ({
      phase: step === 0 ? ('prefill' as const) : ('decode' as const),
      step,
      kind,
      ns: 1e5 * (k + 1) * (1 + random()),
    })),
  );
  return {
    settings: { prompt_lengths: lengths, output_tokens: gen, reps, warmup: 1, cooldown_ms: 50, seed: 42, chunk: 512, profile: true },
    gpu_clock: 'gpu-timestamp',
    cold_start: { parse_ms: 0, upload_ms: 812.5, compile_ms: 301.25, first_ttft_ms: 143.5, warm_ttft_ms: rows[0].ttft.p50, first_prompt_tokens: lengths[0] },
    requests,
    rows,
    depth_curve: depthCurve(requests, (d) => 7e8 + 32768 * d, ROOFS),
    summary: { ...latencyStats(requests.map(timingOf)), completed: requests.length },
    verdicts: rows.map((row) => ({ prompt_tokens: row.prompt_tokens, ...phaseVerdicts(row, costsOf(row.prompt_tokens), ROOFS) })),
    kernels: kernelBreakdown(samples),
    profile_step_ms: { prefill: 21.5 + random(), decode: 2.25 + random() },
  };
}

function withSections(ceilingSamples: number, section: LatencySection): BenchResult {
  const r = newResult(environment());
  r.created_at = '2026-01-02T03:04:05.678Z';
  r.ceilings = ceilings(ceilingSamples);
  r.model = MODEL;
  r.cold_start = { parse_ms: 0, upload_ms: 812.5, compile_ms: 301.25 };
  r.latency = section;
  return JSON.parse(JSON.stringify(r));
}

/** One prompt length, three requests of 8 tokens, 5 samples per roof: fits a link untrimmed. */
export const smallResult = (): BenchResult => withSections(5, latency([16], 3, 8));

let large: string | undefined;
/** Four prompt lengths × 25 requests × 128 tokens, 50 samples per roof (built once, a fresh copy each call). */
export function largeResult(): BenchResult {
  large ??= JSON.stringify(withSections(50, latency([16, 64, 256, 1024], 25, 128)));
  return JSON.parse(large);
}

export const latencyOf = (r: BenchResult) => r.latency as LatencySection;

const compared = () => ({ ttft_ms: 40, tpot_ms: 5, prefill_tokens_per_s: 400, decode_tokens_per_s: 200 });

/** A result with every section the renderers read (untyped: tests mutate it freely). */
export function fullResult(): Record<string, any> {
  type Doc = Record<string, any>;
  const r: Doc = largeResult();
  const timings = [0, 10].map((tSend) => ({ promptTokens: 16, tSend, tTokens: [tSend + 50, tSend + 60, tSend + 70] }));
  const v = verdict({ flops: 1e6, bytes: 1e6, ms: 5 }, { computeFlopsPerS: 1e9, bandwidthBytesPerS: 1e9 });
  const decode = { batch: 2, step_ms: 5, steps: 3, flops: 1e6, bytes: 1e6, intensity: 1, verdict: v };
  r.generation = { prompt_token_ids: [1, 2], token_ids: [3, 4], text: 'Once', note: 'n' };
  r.accuracy = {
    reference: 'cpu-f32',
    sequence: { seed: 7, token_ids: [1, 300, 301, 302] },
    positions: 4,
    kld_mean: 0.00125,
    kld_p99: 0.0041,
    top1_agreement: 0.5,
    first_disagreement: 2,
    kld_per_position: [0.0001, 0.0002, 0.0041, 0.0006],
    arithmetic: { linears: [{ format: 'q4_0', precision: 'int8', linears: 16 }], kv_cache: 'f16' },
    wall_ms: 460,
    reference_load_ms: 50,
    reference_ms: 60,
    engine_ms: 350,
  };
  r.kernel_shapes = {
    source: 'autotuned',
    linear: { 'q4_0 64x64 R1': { kernel: 'matvec', subgroups: true, lanes: 8, rowBlock: 8, rowsPerWorkgroup: 32 } },
    note: 'n',
  };
  r.llama_bench = [
    { model: 'm', sizeBytes: 1e6, params: 1e6, backend: 'WebGPU', ngl: -1, test: 'pp512', meanTokensPerS: 100, stdTokensPerS: 1, samples: [99, 101] },
  ];
  r.serve = {
    settings: {
      requests: 2,
      rate: 10,
      burstiness: 1,
      prompt: { kind: 'fixed', tokens: 16 },
      output: { kind: 'lognormal', median: 3, sigma: 0.5, max: 8 },
      max_batch: 2,
      max_tokens_per_step: 32,
      chunk: null,
      slo: { ttft: 100 },
      seed: 1,
      prefix_cache: true,
      shared_prefix: 8,
    },
    run: {
      result: JSON.parse(JSON.stringify(serveResult(timings, 1, { ttft: 100 }))),
      slo_attainment: 1,
      error_rate: 0,
      timeline: [
        {
          id: 0,
          prompt_tokens: 16,
          output_tokens: 3,
          arrival_ms: 0,
          admit_ms: 0,
          first_token_ms: 50,
          finish_ms: 70,
          error: null,
          cached_tokens: 0,
          token_ids: [5, 6, 7],
        },
      ],
      steps: [{ start_ms: 0, end_ms: 5, decode: 2, prefill_tokens: 0, running: 2, waiting: 0 }],
      decode_roofline: [decode],
      prefix_cache: {
        enabled: true,
        block_tokens: 16,
        prompt_tokens: 32,
        cached_tokens: 0,
        hit_rate: 0,
        requests: 2,
        requests_with_hit: 0,
        ttft_hit: null,
        ttft_miss: { count: 2, mean_ttft_ms: 50, median_ttft_ms: 50, p90_ttft_ms: 50, p99_ttft_ms: 50 },
        capacity_blocks: 4,
        pool_bytes: 4096,
        block_bytes: 1024,
        blocks: 2,
        bytes: 2048,
        inserted: 2,
        evictions: 0,
        refused: 0,
        blocks_copied_in: 0,
        blocks_copied_out: 2,
        copy_bytes: 2048,
      },
    },
    cost: { dollarsPer1kOutputTokens: 0.01, dollarsPer1kTotalTokens: 0.005 },
    batch_sweep: [{ batch: 2, output_throughput: 9, request_throughput: 3, median_ttft_ms: 50, p99_ttft_ms: 50, median_tpot_ms: 10, p99_tpot_ms: 10, decode }],
    rate_sweep: { rate: 2, status: 'found', lo: 2, hi: 3, probes: [{ rate: 2, attainment: 1 }], target: 0.9 },
  };
  const row = { ...r.latency.rows[0] };
  r.webllm = {
    model: { id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC', family: 'Qwen2.5-0.5B', quantization: 'q4f32_1', vramMB: 900 },
    settings: { prompt_lengths: [16], output_tokens: 8, reps: 1, warmup: 0, cooldown_ms: 0, seed: 1, vocab_size: 151936, bos_id: 1 },
    cost_source: null,
    requests: [{ ...r.latency.requests[0], engine: 'webllm', model_id: 'x', path: 'tokens', chunks: 8 }],
    rows: [{ ...row, prefill_flops: null, decode_bytes_per_token: null }],
    verdicts: [],
    comparisons: [{ prompt_tokens: 16, rep: 0, ours: compared(), webllm: compared(), disagreement: { ttft_ms: 0.02 }, flagged: [] }],
    flagged_count: 0,
  };
  r.side_by_side = {
    tokenscope_model: 'a',
    webllm_model: 'b',
    rows: [
      { prompt_tokens: 16, tokenscope: compared(), webllm: compared(), ratio: { ttft_ms: 1, tpot_ms: 1, prefill_tokens_per_s: 1, decode_tokens_per_s: null } },
    ],
    differences: ['d'],
    points: [{ engine: 'webllm', prompt_tokens: 16, phase: 'decode', intensity: 1, gflops: 1, gbps: 1, estimate: true }],
  };
  return r;
}
