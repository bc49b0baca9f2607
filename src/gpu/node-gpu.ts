/**
 * WebGPU in Node through the `webgpu` package (Dawn). Imported only by the CLI and tests —
 * never by browser code.
 */
import type { Fallbacks } from './capabilities.ts';
import { acquireGpu, type GpuContext } from './device.ts';

let gpuInstance: GPU | undefined;

/** One Dawn instance per process (creating several is slow and leaks threads). */
export async function nodeGpu(): Promise<GPU> {
  if (!gpuInstance) {
    const webgpu = await import('webgpu');
    Object.assign(globalThis, webgpu.globals);
    // Timestamps are quantized to ~65 µs by default; we want real nanoseconds.
    // Dawn's two "maxDynamic…BuffersPerPipelineLayout artificially reduced" warnings (lavapipe's
    // limits) come from here: Dawn's native logger writes them to file descriptor 2 while the adapter
    // is created, past Node's process.stderr, and Node cannot redirect that descriptor in-process
    // (no dup2), nor has Dawn a flag to quiet its warnings; filtering them would need a wrapper process.
    gpuInstance = webgpu.create(['disable-dawn-features=timestamp_quantization']) as GPU;
  }
  return gpuInstance;
}

export async function acquireNodeGpu(opts: { disable?: Fallbacks; onError?: (m: string) => void } = {}): Promise<GpuContext> {
  return acquireGpu(await nodeGpu(), { runtime: 'node', ...opts });
}
