import { defineConfig, type Plugin } from 'vite';

/**
 * The page is static: `vite build` writes dist/ (relative asset paths, so it can be hosted in any
 * folder). The production page carries a Content-Security-Policy without unsafe-eval and without
 * inline script; 'wasm-unsafe-eval' lets WebLLM compile its WebAssembly (it allows no JS eval), and
 * its model downloads need https: connections.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self' https: blob: data:",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function contentSecurityPolicy(): Plugin {
  return {
    name: 'tokenscope-csp',
    apply: 'build',
    transformIndexHtml: (html) => html.replace('<head>', `<head>\n    <meta http-equiv="Content-Security-Policy" content="${CSP}" />`),
  };
}

export default defineConfig({
  base: './',
  plugins: [contentSecurityPolicy()],
  build: { target: 'es2022', outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 8000 },
  // The tokenizer worker loads the chat template's interpreter lazily: a module worker can split chunks.
  worker: { format: 'es' },
  server: { fs: { allow: ['..'] } },
});
