/**
 * GPU time from timestamp queries, degrading to the host clock.
 *
 * Each timed compute pass gets two query slots (begin, end). Slots are handed out across any
 * number of submissions and resolved once by `read()`, so timing many decode steps costs no extra
 * readback per step. Without `timestamp-query`, `GpuTimer.create` returns null and callers time
 * on the host clock (submit → onSubmittedWorkDone), labelled as such.
 */

/** Which clock measured a number. Every result carries one. */
export type ClockKind = 'gpu-timestamp' | 'host';

export interface PassTime {
  label: string;
  ns: number;
  /** Begin of the pass, ns after the earliest begin in the same read (the GPU timeline). */
  startNs: number;
}

export class GpuTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolveBuffer: GPUBuffer;
  private readonly readBuffer: GPUBuffer;
  private labels: string[] = [];

  private constructor(
    private readonly device: GPUDevice,
    /** Maximum timed passes between two `read()` calls. */
    readonly capacity: number,
  ) {
    this.querySet = device.createQuerySet({ label: 'GpuTimer.querySet', type: 'timestamp', count: capacity * 2 });
    this.resolveBuffer = device.createBuffer({
      label: 'GpuTimer.resolveBuffer',
      size: capacity * 16,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.readBuffer = device.createBuffer({
      label: 'GpuTimer.readBuffer',
      size: capacity * 16,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /** A timer, or null when the device has no `timestamp-query`. */
  static create(device: GPUDevice, capacity: number): GpuTimer | null {
    if (!device.features.has('timestamp-query')) return null;
    return new GpuTimer(device, capacity);
  }

  /** Pending timed passes. */
  get size(): number {
    return this.labels.length;
  }

  get full(): boolean {
    return this.labels.length >= this.capacity;
  }

  /** Timestamp writes for one compute pass, or undefined when the timer is full. */
  timestampWrites(label: string): GPUComputePassTimestampWrites | undefined {
    if (this.full) return undefined;
    const slot = this.labels.length;
    this.labels.push(label);
    return { querySet: this.querySet, beginningOfPassWriteIndex: slot * 2, endOfPassWriteIndex: slot * 2 + 1 };
  }

  /**
   * Timestamps around work outside any compute pass (e.g. copyBufferToBuffer): give `begin` to an
   * empty pass before the work and `end` to an empty pass after it. Undefined when full.
   */
  span(label: string): { begin: GPUComputePassTimestampWrites; end: GPUComputePassTimestampWrites } | undefined {
    if (this.full) return undefined;
    const slot = this.labels.length;
    this.labels.push(label);
    return {
      begin: { querySet: this.querySet, beginningOfPassWriteIndex: slot * 2 },
      end: { querySet: this.querySet, endOfPassWriteIndex: slot * 2 + 1 },
    };
  }

  /**
   * Resolve all pending slots and read them back (one submission + one map).
   * Invalid deltas (zero or negative — some implementations reorder or clamp) are dropped.
   */
  async read(): Promise<PassTime[]> {
    const n = this.labels.length;
    const labels = this.labels;
    this.labels = [];
    if (n === 0) return [];
    const encoder = this.device.createCommandEncoder({ label: 'GpuTimer.resolve' });
    encoder.resolveQuerySet(this.querySet, 0, n * 2, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, n * 16);
    this.device.queue.submit([encoder.finish()]);
    await this.readBuffer.mapAsync(GPUMapMode.READ, 0, n * 16);
    const stamps = new BigInt64Array(this.readBuffer.getMappedRange(0, n * 16).slice(0));
    this.readBuffer.unmap();
    const out: PassTime[] = [];
    let origin: bigint | undefined;
    for (let i = 0; i < n; i++) if (stamps[2 * i + 1] > stamps[2 * i] && (origin === undefined || stamps[2 * i] < origin)) origin = stamps[2 * i];
    for (let i = 0; i < n; i++) {
      const delta = Number(stamps[2 * i + 1] - stamps[2 * i]);
      if (delta > 0) out.push({ label: labels[i], ns: delta, startNs: Number(stamps[2 * i] - origin!) });
    }
    return out;
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolveBuffer.destroy();
    this.readBuffer.destroy();
  }
}

/** A monotonic host clock in ms (performance.now() exists in browsers and Node). */
export function hostNow(): number {
  return performance.now();
}

/** Host time of `record` → submit → onSubmittedWorkDone, in ms. */
export async function hostTimeMs(device: GPUDevice, record: (encoder: GPUCommandEncoder) => void): Promise<number> {
  const encoder = device.createCommandEncoder();
  record(encoder);
  const commands = encoder.finish();
  const t0 = hostNow();
  device.queue.submit([commands]);
  await device.queue.onSubmittedWorkDone();
  return hostNow() - t0;
}
