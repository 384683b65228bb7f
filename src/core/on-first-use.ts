/**
 * Node's built-in modules that few calls need, loaded on first use rather than when the library is imported:
 * `node:http` (whose reason phrases name a status only in error messages), `node:tls` (for `https` URLs only) and
 * `node:crypto` (for an MD5 or SHA digest; CRC-32 is zlib's) bring a dozen modules each, a few milliseconds of
 * every command's start-up. A plain `require` keeps the
 * call synchronous, so no caller waits a turn for it.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

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
