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

/**
 * How finely this device's timestamps resolve. Dawn rounds them down to 65.536 µs unless
 * developer features are on (a visitor's Chrome), so a pass shorter than that reads 0 or one quantum.
 */
export interface TimestampQuantization {
  quantized: boolean;
  /** The largest power of two (ns) dividing every timestamp read: 1–512 when unquantized, 65536 under Dawn's rounding. */
  quantum_ns: number;
}

/** Below this a quantum is a nanosecond clock's chance alignment: 8 random stamps share 2^10 with odds 2^-80. */
const QUANTIZED_AT_NS = 1024;
/** Stamps needed before calling a clock quantized. */
const MIN_STAMPS = 8;

/** Each device's quantization as probed at acquisition (GpuTimer.probeQuantization). */
const probed = new WeakMap<GPUDevice, TimestampQuantization>();

/** The quantization the nonzero `stamps` show (null when too few to tell). */
export function quantizationOf(stamps: readonly bigint[]): TimestampQuantization | null {
  const nonzero = stamps.filter((t) => t > 0n);
  if (nonzero.length < MIN_STAMPS) return null;
  let quantum = 1n;
  while (quantum < 1n << 30n && nonzero.every((t) => t % (quantum * 2n) === 0n)) quantum *= 2n;
  return { quantized: quantum >= BigInt(QUANTIZED_AT_NS), quantum_ns: Number(quantum) };
}

/** What a timed pass was: a phase (and its step), and in profile mode the kernel class and dispatch. */
export interface TimerTag {
  phase: string;
  step?: number;
  kind?: string;
  label?: string;
}

export interface PassTime {
  tag: TimerTag;
  ns: number;
  /** Begin of the pass, ns after the earliest begin in the same read (the GPU timeline). */
  startNs: number;
}

export class GpuTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolveBuffer: GPUBuffer;
  private readonly readBuffer: GPUBuffer;
  private tags: TimerTag[] = [];
  /** Every timestamp read so far (for quantizationOf), at most 256. */
  private readonly stamps: bigint[] = [];

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
    return this.tags.length;
  }

  get full(): boolean {
    return this.tags.length >= this.capacity;
  }

  /** Timestamp writes for one compute pass, or undefined when the timer is full. */
  timestampWrites(tag: TimerTag): GPUComputePassTimestampWrites | undefined {
    if (this.full) return undefined;
    const slot = this.tags.length;
    this.tags.push(tag);
    return { querySet: this.querySet, beginningOfPassWriteIndex: slot * 2, endOfPassWriteIndex: slot * 2 + 1 };
  }

  /**
   * Timestamps around work outside any compute pass (e.g. copyBufferToBuffer): give `begin` to an
   * empty pass before the work and `end` to an empty pass after it. Undefined when full.
   */
  span(tag: TimerTag): { begin: GPUComputePassTimestampWrites; end: GPUComputePassTimestampWrites } | undefined {
    if (this.full) return undefined;
    const slot = this.tags.length;
    this.tags.push(tag);
    return {
      begin: { querySet: this.querySet, beginningOfPassWriteIndex: slot * 2 },
      end: { querySet: this.querySet, endOfPassWriteIndex: slot * 2 + 1 },
    };
  }

  /** What the timestamps read so far show; null until enough were read. */
  get quantization(): TimestampQuantization | null {
    return quantizationOf(this.stamps) ?? probed.get(this.device) ?? null;
  }

  /**
   * Resolve all pending slots and read them back (one submission + one map).
   * Invalid deltas (negative — some implementations reorder or clamp) are dropped, and so are zero
   * deltas unless the clock is quantized: there a zero is a true reading of a pass shorter than a
   * quantum (a pass starting at a random phase reads 0 or one quantum with the right mean), so
   * dropping it would bias every short kernel upward; averages over many passes stay unbiased.
   */
  async read(): Promise<PassTime[]> {
    const n = this.tags.length;
    const tags = this.tags;
    this.tags = [];
    if (n === 0) return [];
    const encoder = this.device.createCommandEncoder({ label: 'GpuTimer.resolve' });
    encoder.resolveQuerySet(this.querySet, 0, n * 2, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, n * 16);
    this.device.queue.submit([encoder.finish()]);
    await this.readBuffer.mapAsync(GPUMapMode.READ, 0, n * 16);
    const stamps = new BigInt64Array(this.readBuffer.getMappedRange(0, n * 16).slice(0));
    this.readBuffer.unmap();
    for (const t of stamps) if (this.stamps.length < 256 && t > 0n) this.stamps.push(t);
    const keepZero = this.quantization?.quantized === true;
    const kept = (i: number) => stamps[2 * i + 1] > stamps[2 * i] || (keepZero && stamps[2 * i + 1] === stamps[2 * i] && stamps[2 * i] > 0n);
    const out: PassTime[] = [];
    let origin: bigint | undefined;
    for (let i = 0; i < n; i++) if (kept(i) && (origin === undefined || stamps[2 * i] < origin)) origin = stamps[2 * i];
    for (let i = 0; i < n; i++) {
      if (kept(i)) out.push({ tag: tags[i], ns: Number(stamps[2 * i + 1] - stamps[2 * i]), startNs: Number(stamps[2 * i] - origin!) });
    }
    return out;
  }

  /**
   * Read the clock's quantization from `passes` empty timed passes (a few ms); null without
   * timestamp-query.
   */
  static async probeQuantization(device: GPUDevice, passes = 16): Promise<TimestampQuantization | null> {
    const timer = GpuTimer.create(device, passes);
    if (!timer) return null;
    try {
      for (let i = 0; i < passes; i++) {
        const encoder = device.createCommandEncoder({ label: 'GpuTimer.probe' });
        encoder.beginComputePass({ label: 'GpuTimer.probe', timestampWrites: timer.timestampWrites({ phase: 'probe' }) }).end();
        device.queue.submit([encoder.finish()]);
      }
      await timer.read();
      const q = timer.quantization;
      if (q) probed.set(device, q);
      return q;
    } finally {
      timer.destroy();
    }
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
