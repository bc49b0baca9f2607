/**
 * `npm run gpu-check:bundle [-- OUTDIR]` builds the prepared GPU check as one self-contained folder
 * (default `dist-gpu-check/`, git-ignored) that needs no network where it runs:
 *
 *   run.sh                       the one command: `./run.sh RESULTS_DIR [--quick]`
 *   tokenscope-gpu-check.mjs     cli/gpu-check.ts and everything it imports, WGSL inlined (esbuild)
 *   node_modules/webgpu/         the `webgpu` package's loader and its linux-x64 dawn.node (gzip)
 *   lib/libvulkan.so.1           the Debian Vulkan loader (`apt-get download libvulkan1`, unpacked)
 *   lib/glvnd/libGLdispatch.so.0 libglvnd's GL dispatch, which NVIDIA's Vulkan driver links against
 *   matvec.sh                    the linear-layer micro-benchmark (cli/matvec-bench.ts) with the same set-up
 *   node.gz                      this machine's Node binary, used only where no Node ≥ 20 is installed
 *   models/stories260K.*         the golden-token model and its expected output (from ../shared/models)
 *
 * The folder must stay under 64 MiB; the build fails if it does not.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_BYTES = 64 * 2 ** 20;
const MODELS = resolve(ROOT, '../shared/models');

/** `import text from './x.wgsl?raw'` (Vite's raw import) becomes the file's text in the bundle. */
const rawText: Plugin = {
  name: 'raw-text',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: resolve(args.resolveDir, args.path.slice(0, -4)), namespace: 'raw' }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, (args) => ({ contents: readFileSync(args.path, 'utf8'), loader: 'text' }));
  },
};

async function gzip(from: string, to: string): Promise<void> {
  await pipeline(createReadStream(from), createGzip({ level: 6 }), createWriteStream(to));
}

function sizeOf(path: string): number {
  const s = statSync(path);
  return s.isDirectory() ? readdirSync(path).reduce((n, f) => n + sizeOf(join(path, f)), 0) : s.size;
}

/** One Debian package's library, fetched with apt (the only network this step uses), unpacked and copied to `into`. */
function debianLibrary(pkg: string, lib: RegExp, into: string, as: string): void {
  const scratch = mkdtempSync(join(tmpdir(), `tokenscope-${pkg}-`));
  try {
    execFileSync('apt-get', ['download', pkg], { cwd: scratch, stdio: 'inherit' });
    const deb = readdirSync(scratch).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${pkg} produced no .deb`);
    execFileSync('dpkg-deb', ['-x', join(scratch, deb), join(scratch, 'root')]);
    const libDir = join(scratch, 'root/usr/lib/x86_64-linux-gnu');
    const found = readdirSync(libDir).find((f) => lib.test(f));
    if (!found) throw new Error(`no ${lib} in ${deb}`);
    mkdirSync(into, { recursive: true });
    copyFileSync(join(libDir, found), join(into, as));
    writeFileSync(join(into, `${pkg}.txt`), `${deb}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A launcher for one bundled tool: the same Node, Dawn and Vulkan set-up for each. */
const launcher = (comment: string, entry: string, args: string) => `#!/bin/sh
# ${comment}
# Needs a Linux x86-64 machine with a Vulkan-capable GPU driver (NVIDIA: the driver's Vulkan ICD).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "\${TMPDIR:-/tmp}/tokenscope-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/node_modules/webgpu/dist/linux-x64"
cp "$here/node_modules/webgpu/index.js" "$here/node_modules/webgpu/package.json" "$work/node_modules/webgpu/"
gzip -dc "$here/node_modules/webgpu/dist/linux-x64/dawn.node.gz" > "$work/node_modules/webgpu/dist/linux-x64/dawn.node"
cp -r "$here/${entry}" "$here/chunks" "$work/"
ln -s "$here/models" "$work/models"

node_bin=""
# TOKENSCOPE_BUNDLED_NODE=1 uses the bundled Node even where one is installed (to check the bundle).
if [ -z "\${TOKENSCOPE_BUNDLED_NODE:-}" ] && command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0] >= 20' 2>/dev/null)" = "true" ]; then
  node_bin=$(command -v node)
else
  gzip -dc "$here/node.gz" > "$work/node" && chmod +x "$work/node" && node_bin="$work/node"
fi

# dawn.node needs glibc >= 2.34 and libstdc++ with GLIBCXX_3.4.30 (GCC 12): say so before loading it.
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$glibc" ] && [ "$(printf '%s\\n%s\\n' 2.34 "$glibc" | sort -V | head -n 1)" != "2.34" ]; then
  echo "error: the webgpu package's dawn.node needs glibc 2.34 or newer; this system has $glibc (e.g. Ubuntu 22.04+, Debian 12+)." >&2
  exit 1
fi
libstdcxx=$(ldconfig -p 2>/dev/null | awk '/libstdc\\+\\+\\.so\\.6 /{print $NF; exit}')
if [ -n "$libstdcxx" ] && ! grep -qa GLIBCXX_3.4.30 "$libstdcxx"; then
  echo "error: the webgpu package's dawn.node needs libstdc++ with GLIBCXX_3.4.30 (GCC 12 or newer); $libstdcxx lacks it." >&2
  exit 1
fi

# The bundled Vulkan loader is used only when the system has none (or TOKENSCOPE_BUNDLED_VULKAN=1).
if [ -n "\${TOKENSCOPE_BUNDLED_VULKAN:-}" ] || ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 '; then
  export LD_LIBRARY_PATH="$here/lib\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NVIDIA's Vulkan driver needs libGLdispatch (libglvnd); bring it where the system has none.
if ! ldconfig -p 2>/dev/null | grep -q 'libGLdispatch.so.0 '; then
  export LD_LIBRARY_PATH="$here/lib/glvnd\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# Containers often carry NVIDIA's driver library without its Vulkan ICD manifest: write one.
if [ -z "\${VK_ICD_FILENAMES:-}\${VK_DRIVER_FILES:-}" ] && ! ls /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json >/dev/null 2>&1; then
  nv=$(ldconfig -p 2>/dev/null | awk '/libGLX_nvidia\\.so\\.0 /{print $NF; exit}')
  if [ -n "$nv" ]; then
    printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\\n' "$nv" > "$work/nvidia_icd.json"
    export VK_ICD_FILENAMES="$work/nvidia_icd.json"
  fi
fi
${args}
`;

const RUN_SH = launcher(
  'The prepared GPU check: ./run.sh RESULTS_DIR [--quick] [--models ID:QUANT,...] [--budget-s S]',
  'tokenscope-gpu-check.mjs',
  `out="\${1:?usage: ./run.sh RESULTS_DIR [--quick]}"
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$work"
"$node_bin" "$work/tokenscope-gpu-check.mjs" "$out" --stories "$here/models" "$@"`,
);

/** The linear-layer micro-benchmark (cli/matvec-bench.ts) with the same set-up: ./matvec.sh [its flags]. */
const MATVEC_SH = launcher(
  'The linear-layer micro-benchmark: ./matvec.sh --format q4_0 --shapes 2048x2048 --candidates (flags of npm run bench:matvec)',
  'tokenscope-matvec-bench.mjs',
  `cd "$work"
TOKENSCOPE_MATVEC_COMMAND=./matvec.sh "$node_bin" "$work/tokenscope-matvec-bench.mjs" "$@"`,
);

async function main(argv: string[]): Promise<void> {
  const out = resolve(argv[0] ?? join(ROOT, 'dist-gpu-check'));
  if (!existsSync(join(MODELS, 'stories260K.gguf')) || !existsSync(join(MODELS, 'stories260K.expected.json'))) {
    throw new Error(`stories260K.gguf and .expected.json must be in ${MODELS}`);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'node_modules/webgpu/dist/linux-x64'), { recursive: true });
  mkdirSync(join(out, 'lib'));
  mkdirSync(join(out, 'models'));

  await build({
    entryPoints: { 'tokenscope-gpu-check': join(ROOT, 'cli/gpu-check.ts'), 'tokenscope-matvec-bench': join(ROOT, 'cli/matvec-bench.ts') },
    outdir: out,
    outExtension: { '.js': '.mjs' },
    // The two tools share one chunk of the engine (WGSL included) instead of carrying a copy each.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // playwright-core is the browser runtime's, which the bundle never runs.
    external: ['webgpu', 'playwright-core'],
    plugins: [rawText],
    logLevel: 'warning',
  });
  const webgpu = join(ROOT, 'node_modules/webgpu');
  for (const f of ['index.js', 'package.json']) copyFileSync(join(webgpu, f), join(out, 'node_modules/webgpu', f));
  await gzip(join(webgpu, 'dist/linux-x64/dawn.node'), join(out, 'node_modules/webgpu/dist/linux-x64/dawn.node.gz'));
  // The Vulkan loader, and the GL dispatch library NVIDIA's Vulkan driver (libGLX_nvidia) links against,
  // which containers that mount the driver often lack.
  debianLibrary('libvulkan1', /^libvulkan\.so\.1\.\d+/, join(out, 'lib'), 'libvulkan.so.1');
  debianLibrary('libglvnd0', /^libGLdispatch\.so\.0\./, join(out, 'lib/glvnd'), 'libGLdispatch.so.0');
  await gzip(process.execPath, join(out, 'node.gz'));
  writeFileSync(join(out, 'node-version.txt'), `${process.version}\n`);
  for (const f of ['stories260K.gguf', 'stories260K.expected.json']) cpSync(join(MODELS, f), join(out, 'models', f));
  for (const [name, text] of [
    ['run.sh', RUN_SH],
    ['matvec.sh', MATVEC_SH],
  ]) {
    writeFileSync(join(out, name), text);
    chmodSync(join(out, name), 0o755);
  }

  const total = sizeOf(out);
  process.stdout.write(`${relative(process.cwd(), out) || out}: ${(total / 2 ** 20).toFixed(1)} MiB\n`);
  if (total > LIMIT_BYTES) throw new Error(`the bundle is ${(total / 2 ** 20).toFixed(1)} MiB, over the 64 MiB limit`);
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
