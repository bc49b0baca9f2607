import { TokenscopeError } from '../errors.ts';

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** A storage buffer of `size` bytes (rounded up to 4), zero-filled by WebGPU. */
export function storageBuffer(device: GPUDevice, label: string, size: number, extraUsage = 0): GPUBuffer {
  return device.createBuffer({ label, size: align(Math.max(size, 4), 4), usage: STORAGE() | extraUsage });
}

/** A storage buffer holding `data` (padded to 4 bytes). */
export function storageBufferWith(device: GPUDevice, label: string, data: ArrayBufferView, extraUsage = 0): GPUBuffer {
  const buffer = device.createBuffer({
    label,
    size: align(Math.max(data.byteLength, 4), 4),
    usage: STORAGE() | extraUsage,
    mappedAtCreation: true,
  });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buffer.unmap();
  return buffer;
}

export function uniformBuffer(device: GPUDevice, label: string, size: number): GPUBuffer {
  return device.createBuffer({ label, size: align(Math.max(size, 16), 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
}

/** A uniform buffer holding `data` (e.g. a kernel's fixed parameters). */
export function uniformBufferWith(device: GPUDevice, label: string, data: ArrayBufferView | ArrayBuffer): GPUBuffer {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const buffer = uniformBuffer(device, label, bytes.byteLength);
  device.queue.writeBuffer(buffer, 0, bytes as Uint8Array<ArrayBuffer>);
  return buffer;
}

/** Copy `size` bytes at `offset` of a buffer back to the host (its own submission). */
export async function readBuffer(device: GPUDevice, source: GPUBuffer, offset = 0, size = source.size - offset): Promise<ArrayBuffer> {
  const staging = device.createBuffer({ label: `readback.${source.label}`, size: align(size, 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder({ label: 'readBuffer' });
  encoder.copyBufferToBuffer(source, offset, staging, 0, align(size, 4));
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = staging.getMappedRange().slice(0, size);
  staging.destroy();
  return out;
}

export function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * Run `fn` inside validation, out-of-memory and internal error scopes; any error captured
 * becomes a typed `gpu-validation` error. GPU tests wrap their work in this so that a
 * validation error fails the test.
 */
export async function withErrorScopes<T>(device: GPUDevice, what: string, fn: () => Promise<T> | T): Promise<T> {
  device.pushErrorScope('internal');
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let result: T | undefined;
  let failure: { error: unknown } | undefined;
  try {
    result = await fn();
  } catch (error) {
    failure = { error };
  }
  const errors = (await Promise.all([device.popErrorScope(), device.popErrorScope(), device.popErrorScope()])).filter((e): e is GPUError => e !== null);
  if (errors.length > 0) {
    const oom = errors.some((e) => e.constructor.name === 'GPUOutOfMemoryError');
    throw new TokenscopeError(
      'gpu-validation',
      `${what}: ${errors.map((e) => e.message).join('; ')}`,
      oom ? 'The GPU ran out of memory: pick a smaller model or context.' : 'This is a bug; please report it with the device details.',
    );
  }
  if (failure) throw failure.error;
  return result as T;
}
