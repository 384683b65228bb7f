/**
 * Bundles the command line (`dist/cli/main.js` and what it imports, dependencies included) into
 * `dist/mission-data.js` and lazily loaded chunks under `dist/chunks/`. Loading one file instead of a few
 * hundred takes about a quarter off every command's start-up; the library entry points stay plain `tsc` output.
 */
import { rmSync } from 'node:fs';
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
 * The client imports two of undici's own modules, bundled, and its index only as a fallback for the library
 * (see `loadTransport` in src/http/undici.ts): the bundle leaves that one to Node rather than carry all of undici.
 * undici's proxy agent becomes a chunk of its own, loaded only when a proxy is set.
 */
const undiciIndexOutside = {
  name: 'undici-index-outside',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', external: true }));
  },
};

// Chunk names carry content hashes: clear the last build's so dist/ holds only what this one wrote.
rmSync('dist/chunks', { recursive: true, force: true });

await build({
  entryPoints: { 'mission-data': 'dist/cli/main.js' },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Bundled CommonJS dependencies call require(): give each ES module chunk one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  logLevel: 'warning',
  plugins: [withoutHttp2, undiciIndexOutside],
});
