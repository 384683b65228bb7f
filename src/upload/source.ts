/**
 * Reading a file to upload: exactly the bytes it had when measured, its last chunk held back until the file is
 * seen unchanged, and its MD5 (the form Content-MD5 takes) from the same reads.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { abortedError } from '../core/batch.js';
import { AbortedError, LocalFileError } from '../core/errors.js';

/** Large reads from disk: fewer syscalls and fewer, larger body chunks on the wire. */
const READ_BUFFER_BYTES = 1024 * 1024;

/** The base64 MD5 of a file (the form Content-MD5 takes), read in one streaming pass. */
export async function md5Base64(
  path: string,
  size: number,
  signal?: AbortSignal,
  mtimeMs?: number,
): Promise<string> {
  return (await md5Digest(path, size, signal, mtimeMs)).toString('base64');
}

/** Bytes read per call while hashing: large reads keep the pass at the speed of the hash itself. */
const HASH_BLOCK_BYTES = 8 * 1024 * 1024;

/**
 * The MD5 of a file's first `size` bytes, read in large blocks into one buffer (no stream, no per-chunk copies:
 * the pass runs at the speed of MD5 itself); `onBytes` hears the bytes hashed so far. Fails with
 * `E_FILE_CHANGED` when the file is not as measured.
 */
export async function md5Digest(
  path: string,
  size: number,
  signal?: AbortSignal,
  mtimeMs?: number,
  onBytes?: (hashed: number) => void,
): Promise<Buffer> {
  const hash = createHash('md5');
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new LocalFileError(`Cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    // Two buffers: the next block is read (in the thread pool) while this one is hashed.
    const length = Math.min(HASH_BLOCK_BYTES, Math.max(size, 1));
    const buffers = [Buffer.allocUnsafe(length), Buffer.allocUnsafe(length)] as const;
    const readBlock = (index: number, position: number) =>
      handle.read(buffers[index % 2] as Buffer, 0, Math.min(length, size - position), position);
    let hashed = 0;
    let block = 0;
    onBytes?.(0);
    let pending = size > 0 ? readBlock(0, 0) : undefined;
    while (pending) {
      const { bytesRead, buffer } = await pending;
      if (bytesRead === 0) throw fileChanged(path, size);
      const next = hashed + bytesRead;
      block += 1;
      pending = next < size ? readBlock(block, next) : undefined;
      // Should this pass stop early (cancelled), the read under way settles unheard, after the file is closed.
      pending?.catch(() => undefined);
      if (signal?.aborted) throw abortedError(signal);
      hash.update(buffer.subarray(0, bytesRead));
      hashed = next;
      onBytes?.(hashed);
    }
    const now = await handle.stat();
    if (now.size !== size || (mtimeMs !== undefined && now.mtimeMs !== mtimeMs))
      throw fileChanged(path, size);
  } catch (error) {
    if (error instanceof LocalFileError || error instanceof AbortedError) throw error;
    throw new LocalFileError(`Cannot read ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    await handle.close();
  }
  return hash.digest();
}

/**
 * Reads exactly the `size` bytes a file had when it was measured. The last chunk is held back until the file is
 * seen unchanged (same size and modification time): a file that changed while it was being read fails the
 * stream before its last byte, so an upload is cut short and the store keeps nothing the user did not mean.
 */
export function openExactly(path: string, size: number, mtimeMs?: number): Readable {
  const source = createReadStream(path, {
    highWaterMark: READ_BUFFER_BYTES,
    start: 0,
    end: Math.max(0, size - 1),
  });
  const guard = new UnchangedGuard(path, size, mtimeMs);
  source.on('error', (error) =>
    guard.destroy(new LocalFileError(`Cannot read ${path}: ${error.message}`, { cause: error })),
  );
  // Whoever consumes the guard may destroy it (a failed attempt): close the file with it.
  guard.on('close', () => source.destroy());
  if (size === 0) {
    // Nothing to read (a read of byte 0 to 0 would take one byte): the check alone decides.
    source.destroy();
    queueMicrotask(() => guard.end());
    return guard;
  }
  return source.pipe(guard);
}

/**
 * The same bytes as `openExactly`, read at any position with plain system calls (the wire client sends from
 * them: no stream, no buffer per read). `check` before the last bytes fails a file that changed since it was
 * measured; `close` once the upload is over.
 */
export class ExactReads {
  #fd: number | undefined;

  constructor(
    private readonly path: string,
    private readonly size: number,
    private readonly mtimeMs: number | undefined,
  ) {}

  /** Fills `into` from `position` (never past the measured size); returns the bytes read. */
  read(into: Buffer, position: number): number {
    const length = Math.min(into.length, this.size - position);
    if (length <= 0) return 0;
    try {
      this.#fd ??= openSync(this.path, 'r');
      return readSync(this.#fd, into, 0, length, position);
    } catch (error) {
      throw new LocalFileError(`Cannot read ${this.path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Throws `E_FILE_CHANGED` when the file's size or modification time is not as measured. */
  check(): void {
    let now: { size: number; mtimeMs: number } | undefined;
    try {
      now = statSync(this.path);
    } catch {
      now = undefined;
    }
    if (!now || now.size !== this.size || (this.mtimeMs !== undefined && now.mtimeMs !== this.mtimeMs))
      throw fileChanged(this.path, this.size);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Passes bytes through, holding the last chunk until the file is seen unchanged since it was measured. */
class UnchangedGuard extends Transform {
  private seen = 0;
  private held: Buffer | undefined;

  constructor(
    private readonly path: string,
    private readonly size: number,
    private readonly mtimeMs: number | undefined,
  ) {
    super({ highWaterMark: READ_BUFFER_BYTES });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.size) {
      callback(this.changed());
      return;
    }
    const previous = this.held;
    this.held = chunk;
    callback(null, previous);
  }

  override _flush(callback: TransformCallback): void {
    if (this.seen !== this.size) {
      callback(this.changed());
      return;
    }
    let now: { size: number; mtimeMs: number } | undefined;
    try {
      now = statSync(this.path);
    } catch {
      now = undefined;
    }
    if (!now || now.size !== this.size || (this.mtimeMs !== undefined && now.mtimeMs !== this.mtimeMs)) {
      callback(this.changed());
      return;
    }
    callback(null, this.held);
  }

  private changed(): LocalFileError {
    return fileChanged(this.path, this.size);
  }
}

/** The error of a file that changed between being measured and being read. */
function fileChanged(path: string, size: number): LocalFileError {
  return new LocalFileError(
    `${path} changed while it was being uploaded (${size} bytes when measured); nothing was stored. Upload it again once it is complete.`,
    { code: 'E_FILE_CHANGED' },
  );
}
