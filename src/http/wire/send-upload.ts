/** Sending an upload's bytes after the request head: positioned reads into two buffers that take turns. */
import type { Socket } from 'node:net';
import { FAULTS } from '../../core/dispatch-faults.js';
import { WireError } from './head.js';
import type { WireUpload } from './types.js';

/** Bytes read from an upload's source per write. */
const SEND_BUFFER_BYTES = 1024 * 1024;

/** The two buffers a connection sends from, made on its first upload. */
export function sendBuffers(): [Buffer, Buffer] {
  return [Buffer.allocUnsafeSlow(SEND_BUFFER_BYTES), Buffer.allocUnsafeSlow(SEND_BUFFER_BYTES)];
}

/**
 * Writes `upload`'s bytes to `socket`, one buffer read while the other is written, telling `wrote()` as each
 * write goes out and as the socket takes it whole; stops (resolving false) once `stop()` says an answer came
 * first or the exchange ended. Resolves true once every byte was handed to the socket; throws the source's
 * error, or a short source's.
 */
export async function sendUpload(
  socket: Socket,
  upload: WireUpload,
  buffers: [Buffer, Buffer],
  stop: () => boolean,
  wrote: () => void,
): Promise<boolean> {
  const writing: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];
  let position = 0;
  let turn = 0;
  while (position < upload.size) {
    await writing[turn];
    // An answer came (the server refused early) or the exchange failed: nothing more to send.
    if (stop()) return false;
    const buffer = buffers[turn] as Buffer;
    const length = Math.min(buffer.length, upload.size - position);
    let read = 0;
    while (read < length) {
      const got = upload.read(buffer.subarray(read, length), position + read);
      if (got === 0) break;
      read += got;
    }
    if (read < length || position + length === upload.size) upload.check?.();
    if (read < length) throw new WireError('the source ended before its size', FAULTS.sizeChanged);
    wrote();
    writing[turn] = new Promise((resolve) =>
      socket.write(buffer.subarray(0, length), () => {
        wrote();
        resolve();
      }),
    );
    position += length;
    upload.onBytes?.(position);
    turn = 1 - turn;
  }
  if (upload.size === 0) upload.check?.();
  await Promise.all(writing);
  return true;
}
