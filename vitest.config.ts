import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { chromiumArgs, chromiumPath } from './cli/chromium.ts';

/**
 * Four projects:
 *  - unit:        pure TypeScript in Node (no GPU).
 *  - gpu-node:    real WebGPU in Node via the `webgpu` package (Dawn) on Mesa lavapipe (has shader-f16).
 *  - gpu-browser: the same GPU test files in headless Chromium (SwiftShader; no shader-f16).
 *  - e2e:         the built page (`dist/`) driven by Playwright in Chromium.
 */
/** Where GPU tests find the real test model: ../shared/models, else models/cache (see src/model/catalog.ts). */
const MODEL_DIR =
  [resolve(import.meta.dirname, '../shared/models'), resolve(import.meta.dirname, 'models/cache')].find((d) => existsSync(resolve(d, 'stories260K.gguf'))) ??
  '';

export default defineConfig({
  server: { fs: { allow: ['..'] } },
  define: { __TEST_MODEL_DIR__: JSON.stringify(MODEL_DIR) },
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 },
      },
      {
        extends: true,
        test: {
          name: 'gpu-node',
          include: ['test/gpu/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Dawn instances are process-wide; one worker keeps the 2-core machine from thrashing.
          pool: 'forks',
          maxWorkers: 1,
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu-browser',
          include: ['test/gpu/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 60_000,
          fileParallelism: false,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: { executablePath: chromiumPath(), args: chromiumArgs() } }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
