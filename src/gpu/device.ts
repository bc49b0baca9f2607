import { TokenscopeError } from '../errors.ts';
import { LANGUAGE_FEATURES, OPTIONAL_FEATURES, REQUESTED_LIMITS, readCapabilities, type Capabilities, type Fallbacks } from './capabilities.ts';
import { GpuTimer, type TimestampQuantization } from './timer.ts';

/** Where the device lives: the page (navigator.gpu) or Node (the `webgpu` package). */
export type Runtime = 'browser' | 'node';

export interface GpuContext {
  readonly device: GPUDevice;
  readonly adapter: GPUAdapter;
  readonly caps: Capabilities;
  readonly runtime: Runtime;
  /** Resolves when the device is lost (never rejects). */
  readonly lost: Promise<GPUDeviceLostInfo>;
  /** How finely timestamps resolve, probed at acquisition; null without timestamp-query. */
  readonly timestamps: TimestampQuantization | null;
  /** Uncaptured errors seen so far (each also goes to `onError`). */
  readonly uncaptured: string[];
  /** True once `lost` resolved. */
  isLost(): boolean;
  /** Throws a typed `device-lost` error if the device is gone; call between steps. */
  assertAlive(): void;
  destroy(): void;
}

export interface AcquireOptions {
  runtime: Runtime;
  /** Optional features to leave off even when the adapter has them (tests cover every fallback). */
  disable?: Fallbacks;
  powerPreference?: GPUPowerPreference;
  /** Called for each uncaptured error and on device loss; default logs to console.warn. */
  onError?: (message: string) => void;
}

const BROWSER_HINT =
  'Use a browser with WebGPU: Chrome or Edge 113+ (desktop), Chrome 121+ on Android, Safari 26+, ' +
  'or Firefox 141+ on Windows. On Linux Chrome, enable chrome://flags/#enable-unsafe-webgpu and Vulkan.';

/** `navigator.gpu` or a typed error explaining what to do. */
export function browserGpu(): GPU {
  const gpu = (globalThis as { navigator?: Navigator }).navigator?.gpu;
  if (!gpu) {
    throw new TokenscopeError('webgpu-unavailable', 'WebGPU is not available in this browser.', BROWSER_HINT);
  }
  return gpu;
}

/**
 * Acquire adapter and device: optional features only when present (and not disabled),
 * limits at the adapter's maxima, loss and uncaptured errors wired so nothing fails silently.
 */
export async function acquireGpu(gpu: GPU, options: AcquireOptions): Promise<GpuContext> {
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter) {
    throw new TokenscopeError(
      'no-adapter',
      'WebGPU is present but no GPU adapter was found.',
      options.runtime === 'browser'
        ? `Your GPU or driver may be blocklisted. ${BROWSER_HINT}`
        : 'Install a Vulkan driver (e.g. Mesa lavapipe: apt-get install mesa-vulkan-drivers) or run on a machine with a GPU.',
    );
  }
  const disable = options.disable ?? new Set();
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f) && !disable.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of REQUESTED_LIMITS) requiredLimits[name] = Number(adapter.limits[name]);

  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'tokenscope' });
  } catch (cause) {
    throw new TokenscopeError(
      'limit-too-low',
      `The GPU refused a device with features [${requiredFeatures.join(', ')}] at its own maximum limits: ${String(cause)}`,
      'Try disabling optional features (?disable=shader-f16,subgroups or --disable …) or update your browser/driver.',
      { cause },
    );
  }

  const reported = (gpu as { wgslLanguageFeatures?: ReadonlySet<string> }).wgslLanguageFeatures ?? new Set<string>();
  const languageFeatures = new Set(LANGUAGE_FEATURES.filter((f) => reported.has(f) && !disable.has(f)));
  const report = options.onError ?? ((m: string) => console.warn(`[tokenscope] ${m}`));
  const uncaptured: string[] = [];
  let lostFlag = false;
  let lostInfo: GPUDeviceLostInfo | undefined;
  device.addEventListener('uncapturederror', (event) => {
    const message = `Uncaptured WebGPU ${(event as GPUUncapturedErrorEvent).error.constructor.name}: ${(event as GPUUncapturedErrorEvent).error.message}`;
    uncaptured.push(message);
    report(message);
  });
  const lost = device.lost.then((info) => {
    lostFlag = true;
    lostInfo = info;
    if (info.reason !== 'destroyed') report(`GPU device lost (${info.reason}): ${info.message}`);
    return info;
  });

  return {
    device,
    adapter,
    caps: readCapabilities(adapter, device, languageFeatures),
    timestamps: await GpuTimer.probeQuantization(device),
    runtime: options.runtime,
    lost,
    uncaptured,
    isLost: () => lostFlag,
    assertAlive() {
      if (lostFlag) throw deviceLostError(lostInfo);
    },
    destroy: () => device.destroy(),
  };
}

/** How long to wait for `device.lost` after a failure, to tell a lost device from other errors. */
export const LOSS_GRACE_MS = 250;

/**
 * The error to report for `e`, a failure of work on `ctx`: a typed `device-lost` error with the
 * real reason when the device is (or within a moment becomes) lost, since a lost device rejects
 * pending readbacks before it reports the loss; otherwise `e` itself.
 */
export async function explainFailure(ctx: Pick<GpuContext, 'isLost' | 'lost'>, e: unknown, graceMs = LOSS_GRACE_MS): Promise<unknown> {
  // Our own typed errors (cancelled, bad input, non-finite output) say what happened already.
  if (e instanceof TokenscopeError && !ctx.isLost()) return e;
  const lost = ctx.isLost() ? await ctx.lost : await Promise.race([ctx.lost, new Promise<undefined>((ok) => setTimeout(ok, graceMs))]);
  return lost ? deviceLostError(lost) : e;
}

export function deviceLostError(info?: GPUDeviceLostInfo): TokenscopeError {
  const why = info ? `${info.reason}${info.message ? `: ${info.message}` : ''}` : 'unknown reason';
  return new TokenscopeError(
    'device-lost',
    `The GPU device was lost (${why}). Results gathered so far are kept.`,
    'Start again to continue on a fresh device; if it keeps happening, close other GPU-heavy tabs or update your driver.',
  );
}
