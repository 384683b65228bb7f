/** The bytes of an upload in both forms a dispatch sends from: a stream (undici) and reads at a position (the wire client). */
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { UploadBody } from '../../src/http/objects.js';

/** An upload of `bytes`, sent in `pieces` chunks when it is sent as a stream. */
export function bytesUpload(bytes: Buffer, pieces: Buffer[] = [bytes]): UploadBody {
  return {
    size: bytes.length,
    open: () => Readable.from(pieces),
    read: (into, position) => bytes.copy(into, 0, position, Math.min(bytes.length, position + into.length)),
  };
}

/** An upload of the file at `path`, declared as `size` bytes (which may differ from the file's, to test that). */
export function fileUpload(path: string, size: number): UploadBody {
  return {
    size,
    open: () => createReadStream(path),
    read: (into, position) => {
      const fd = openSync(path, 'r');
      try {
        return readSync(fd, into, 0, into.length, position);
      } finally {
        closeSync(fd);
      }
    },
  };
}
