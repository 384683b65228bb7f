/**
 * Node's built-in modules that few calls need, loaded on first use rather than when the library is imported:
 * `node:http` (whose reason phrases name a status only in error messages), `node:tls` (for `https` URLs only) and
 * `node:crypto` (for an MD5 or SHA digest) bring a dozen modules each, a few milliseconds of every command's
 * start-up; `node:net`, `node:zlib` (CRC-32) and `node:stream` (which the other two bring too) are wanted by the
 * first request or checksum only. A plain `require` keeps the
 * call synchronous, so no caller waits a turn for it. Each module is kept once loaded: Node's `require` of a
 * built-in copies its exports to the module's ESM form at every call (9 µs for `node:zlib`, once per file of a
 * batch by the CRC-32).
 */
import { createRequire } from 'node:module';

const required = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

function load(name: string): unknown {
  let module = loaded.get(name);
  if (module === undefined) {
    module = required(name);
    loaded.set(name, module);
  }
  return module;
}

/** The reason phrase of an HTTP status (`Not Found`), or undefined for a status Node does not name. */
export function reasonPhrase(status: number): string | undefined {
  return (load('node:http') as typeof import('node:http')).STATUS_CODES[status];
}

/** `node:tls`, loaded by the first secure connection. */
export function tlsModule(): typeof import('node:tls') {
  return load('node:tls') as typeof import('node:tls');
}

/** `node:crypto`, loaded by the first digest that needs it. */
export function cryptoModule(): typeof import('node:crypto') {
  return load('node:crypto') as typeof import('node:crypto');
}

/** `node:net`, loaded by the first connection. */
export function netModule(): typeof import('node:net') {
  return load('node:net') as typeof import('node:net');
}

/** `node:zlib`, loaded by the first CRC-32. */
export function zlibModule(): typeof import('node:zlib') {
  return load('node:zlib') as typeof import('node:zlib');
}

/** `node:stream`, loaded by the first body read as a stream. */
export function streamModule(): typeof import('node:stream') {
  return load('node:stream') as typeof import('node:stream');
}
