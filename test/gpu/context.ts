/**
 * The GPU for GPU tests: Dawn in Node (gpu-node project) or navigator.gpu in Chromium
 * (gpu-browser project). The same test files run in both.
 */
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { acquireGpu, browserGpu, type GpuContext } from '../../src/gpu/device.ts';

export const inBrowser = typeof window !== 'undefined';

export async function testGpu(disable?: Fallbacks): Promise<GpuContext> {
  const onError = (m: string) => {
    throw new Error(m);
  };
  if (inBrowser) return acquireGpu(browserGpu(), { runtime: 'browser', disable, onError });
  // A computed specifier keeps Vite from bundling the Node-only module into the browser run.
  const nodeModule = '../../src/gpu/node-gpu.ts';
  const { acquireNodeGpu } = (await import(/* @vite-ignore */ nodeModule)) as typeof import('../../src/gpu/node-gpu.ts');
  return acquireNodeGpu({ disable, onError });
}
