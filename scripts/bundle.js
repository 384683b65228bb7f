/**
 * Bundles what the package runs, dependencies included: the command line (`src/cli/main.ts`) into
 * `dist/mission-data.js`, and the library entries (`src/index.ts`, `src/server/index.ts`) into `dist/index.js`
 * and `dist/server/index.js`, over the `tsc` output of the same names (whose declarations stay). The three share
 * their lazily loaded chunks under `dist/chunks/`, so the S3 and PostgreSQL clients of the reference server are
 * shipped once. Loading one file instead of a few hundred takes about a quarter off every command's start-up,
 * and the published package depends on nothing at run time (`npm run build` runs this after `tsc`).
 */
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * undici's HTTP/2 client requires `node:http2` when it loads, which costs ~15 ms of every command's start-up;
 * the client never enables HTTP/2 (`allowH2`), so undici gets the stand-in it already uses where Node lacks
 * http2 (an object with empty `constants`).
 */
const withoutHttp2 = {
  name: 'without-http2',
  setup(build) {
    build.onResolve({ filter: /^node:http2$/ }, (args) =>
      args.importer.includes('undici') ? { path: 'http2', namespace: 'without-http2' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'without-http2' }, () => ({
      contents: 'module.exports = { constants: {} };',
      loader: 'js',
    }));
  },
};

/**
 * The client imports two of undici's own modules, bundled, and its index only as a fallback should those move
 * (see `loadTransport` in src/http/undici.ts). Bundled, they cannot move: the fallback gets a stand-in that
 * says so rather than all of undici, which the package does not install.
 */
const undiciIndexLeftOut = {
  name: 'undici-index-left-out',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', namespace: 'undici-index-left-out' }));
    build.onLoad({ filter: /.*/, namespace: 'undici-index-left-out' }, () => ({
      contents: "throw new Error('undici is bundled: its index is not part of this package.');",
      loader: 'js',
    }));
  },
};

/**
 * env-paths imports `process` from `node:process`, whose ES facade reads every property of `process` as it
 * loads, `stdout` and `stderr` included: their streams are made at import, ~4 ms of every start-up. Its default
 * export is the global `process` itself, which the stand-in hands over.
 */
const processGlobal = {
  name: 'process-global',
  setup(build) {
    build.onResolve({ filter: /^(node:)?process$/ }, (args) =>
      args.importer.includes('env-paths') ? { path: 'process', namespace: 'process-global' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'process-global' }, () => ({
      contents: 'export default process;',
      loader: 'js',
    }));
  },
};

const result = await build({
  entryPoints: {
    'mission-data': 'src/cli/main.ts',
    index: 'src/index.ts',
    'server/index': 'src/server/index.ts',
  },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  // Bundled CommonJS dependencies call require(): give each ES module chunk one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
  plugins: [withoutHttp2, undiciIndexLeftOut, processGlobal],
});

// Chunk names carry content hashes: remove the last build's once this one is written (never before, so a
// test running the bundle beside a build never finds a chunk missing), and dist/ holds only what this wrote.
const written = new Set(Object.keys(result.metafile.outputs).map((path) => resolve(path)));
for (const entry of readdirSync('dist/chunks', { withFileTypes: true })) {
  const path = resolve(join(entry.parentPath, entry.name));
  if (!written.has(path)) rmSync(path, { recursive: true, force: true });
}
