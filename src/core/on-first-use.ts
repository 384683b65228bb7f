/**
 * Node's built-in modules that few calls need, loaded on first use rather than when the library is imported:
 * `node:http` (whose reason phrases name a status only in error messages) and `node:tls` (for `https` URLs only)
 * bring a dozen modules with them, a few milliseconds of every command's start-up. A plain `require` keeps the
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
