import { existsSync } from 'node:fs';

/** Where to look for a Chromium/Chrome when neither --browser nor CHROME_PATH names one. */
const USUAL_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
];

/** The browser executable: explicit path, then $CHROME_PATH, then the usual install paths. */
export function chromiumPath(explicit?: string): string {
  const candidates = [explicit, process.env.CHROME_PATH, ...USUAL_PATHS].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `No Chromium or Chrome found (looked at ${candidates.join(', ')}). ` +
        'Install one (Debian: apt-get install chromium) or pass --browser PATH / set CHROME_PATH.',
    );
  }
  return found;
}

/**
 * Flags for headless WebGPU. `webgpu: false` leaves WebGPU off (requestAdapter() → null),
 * which the tests use to check the "no WebGPU" message.
 */
export function chromiumArgs(opts: { webgpu?: boolean; swiftshader?: boolean } = {}): string[] {
  const { webgpu = true, swiftshader = process.platform === 'linux' && !process.env.TOKENSCOPE_REAL_GPU } = opts;
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ];
  if (webgpu) {
    args.push('--enable-unsafe-webgpu', '--enable-webgpu-developer-features');
    if (swiftshader) args.push('--use-webgpu-adapter=swiftshader');
    else args.push('--enable-features=Vulkan', '--ignore-gpu-blocklist');
  }
  return args;
}
