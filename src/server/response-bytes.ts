/**
 * The body bytes of a response, for the request log: every chunk its route hands to `write()` and `end()`,
 * whatever the route (an API answer, an object, a plain-text refusal). Counted on the response itself, as
 * Node keeps no such count (a socket's `bytesWritten` mixes in the headers and the connection's other answers).
 */
import type { ServerResponse } from 'node:http';

/** The byte length of a chunk as `write()` and `end()` take it (a string in `encoding`, or bytes). */
function chunkBytes(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string') {
    return Buffer.byteLength(
      chunk,
      Buffer.isEncoding(String(encoding)) ? (encoding as BufferEncoding) : 'utf8',
    );
  }
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

/** Counts the body bytes handed to `res` from now on; returns how to read the count. */
export function countBodyBytes(res: ServerResponse): () => number {
  let bytes = 0;
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, ...args: unknown[]) {
    bytes += chunkBytes(args[0], args[1]);
    return Reflect.apply(write, this, args) as boolean;
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    if (typeof args[0] !== 'function') bytes += chunkBytes(args[0], args[1]);
    return Reflect.apply(end, this, args) as ServerResponse;
  } as ServerResponse['end'];
  return () => bytes;
}
