/**
 * Every capability-based choice of kernel shape or variant, in one visible place.
 *
 * CPU adapters (SwiftShader, lavapipe) pay for each workgroup and barrier, so they want few,
 * long-running workgroups; real GPUs want many to hide memory latency. One fixed shape cannot be
 * fast on both, so shapes are chosen here from the capability record (and tuned further at
 * start where a kernel offers choices).
 */
import type { Capabilities } from '../gpu/capabilities.ts';

export interface ProbeShapes {
  /** Default cap on the bandwidth working set (bytes). */
  workingSetCap: number;
  /** Grids tried for the streaming kernels; the fastest is kept. */
  bandwidthWorkgroups: number[];
  fmaWorkgroups: number;
  fmaIterations: number;
  /** Square matmul size for the compute roof. */
  matmulSize: number;
}

const MiB = 1024 * 1024;

export function probeShapes(caps: Capabilities): ProbeShapes {
  if (caps.cpuLike) {
    return { workingSetCap: 256 * MiB, bandwidthWorkgroups: [16, 64, 256], fmaWorkgroups: 32, fmaIterations: 512, matmulSize: 384 };
  }
  return { workingSetCap: 1024 * MiB, bandwidthWorkgroups: [1024, 4096, 16384, 65536], fmaWorkgroups: 8192, fmaIterations: 4096, matmulSize: 2048 };
}
