/** The object store's write path: a PUT body into a temporary file, hashed, synced and linked into place. */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, open, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { ChecksumRecord, Digests } from './checksums.js';
import { type PutOptions, PutRejected } from './object-store.js';

/** Stream buffer size for object reads and writes: ~1 MiB keeps the server off the critical path. */
export const STREAM_BUFFER_BYTES = 1024 * 1024;

/**
 * The file system refused a write of a PUT (full, read-only, a name too long, an I/O error): the store is to
 * blame, not the request. `code` is the errno name (`ENOSPC`, `EROFS`, ...); the original error is the cause.
 */
export class StoreWriteError extends Error {
  readonly code: string;

  constructor(cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`Writing to the store failed (${code}): ${detail}`, { cause });
    this.code = code;
  }
}

/** Runs a file-system step of a PUT, so that any failure of it reads as the store's. */
async function storeStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof StoreWriteError ? error : new StoreWriteError(error);
  }
}

/** The outcome of taking in a PUT body. */
interface Received extends Digests {
  received: number;
}

/**
 * Copies a PUT body into an open temporary file, hashing it on the way. Chunks that arrive while a write is
 * under way are written together by the next one, and the body is paused while a buffer's worth waits.
 * Rejects with StoreWriteError when a write fails, PutRejected 408 when no bytes came for `idleMs` (time spent
 * waiting on the disk does not count), and the body's own error when the client goes away. Unlike
 * `pipeline`, it never destroys the body, whose socket the route still needs to answer on; it leaves it paused.
 */
function receive(body: Readable, handle: FileHandle, idleMs: number): Promise<Received> {
  return new Promise((resolvePromise, reject) => {
    if (body.destroyed) {
      reject(new Error('The client closed the connection before the body arrived.'));
      return;
    }
    const hash = createHash('md5');
    let crc = 0;
    let received = 0;
    let written = 0;
    let queue: Buffer[] = [];
    let queued = 0;
    let writing = false;
    let ended = false;
    let settled = false;
    const idle = setTimeout(() => {
      if (body.isPaused()) {
        idle.refresh();
        return;
      }
      const seconds = Number((idleMs / 1000).toFixed(3));
      settle(
        new PutRejected(
          408,
          `No bytes of the body arrived for ${seconds} s: the upload was given up and nothing was stored.`,
        ),
      );
    }, idleMs);
    const pump = async () => {
      writing = true;
      while (queue.length > 0 && !settled) {
        const chunks = queue;
        const bytes = queued;
        queue = [];
        queued = 0;
        if (!ended) body.resume();
        try {
          await writeAll(handle, chunks, written);
        } catch (error) {
          settle(new StoreWriteError(error));
          return;
        }
        written += bytes;
      }
      writing = false;
      if (ended) settle(undefined);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      hash.update(chunk);
      crc = crc32(chunk, crc);
      idle.refresh();
      queue.push(chunk);
      queued += chunk.length;
      if (queued >= STREAM_BUFFER_BYTES) body.pause();
      if (!writing) void pump();
    };
    const onEnd = () => {
      ended = true;
      clearTimeout(idle);
      if (!writing) settle(undefined);
    };
    const onBodyError = (error: Error) => settle(error);
    const onBodyClose = () => {
      if (!body.readableEnded)
        settle(new Error('The client closed the connection before the whole body arrived.'));
    };
    function settle(error: unknown): void {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      body.off('data', onData).off('end', onEnd).off('error', onBodyError).off('close', onBodyClose);
      body.pause();
      if (error === undefined) resolvePromise({ received, md5: hash.digest(), crc32: crc });
      else reject(error);
    }
    body.on('data', onData).on('end', onEnd).on('error', onBodyError).on('close', onBodyClose);
  });
}

/** Writes every byte of `chunks` at `position`, going on after short writes. */
async function writeAll(handle: FileHandle, chunks: Buffer[], position: number): Promise<void> {
  let pending = chunks;
  let at = position;
  while (pending.length > 0) {
    const { bytesWritten } = await handle.writev(pending, at);
    if (bytesWritten === 0) throw Object.assign(new Error('The disk took no bytes.'), { code: 'EIO' });
    at += bytesWritten;
    let skip = bytesWritten;
    while (pending.length > 0 && skip >= (pending[0] as Buffer).length) {
      skip -= (pending[0] as Buffer).length;
      pending = pending.slice(1);
    }
    if (skip > 0) pending = [(pending[0] as Buffer).subarray(skip), ...pending.slice(1)];
  }
}

/** Flushes a folder's entries to disk, so that a link just made in it survives a crash. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Where a PUT writes: its temporary file, its place in the store, and how the folders of that place are made. */
export interface WriteTarget {
  /** The storage key, for messages. */
  key: string;
  /** A fresh temporary file in the store's incoming folder (on the store's file system, so the link is atomic). */
  temp: string;
  /** The object's file path in the store. */
  path: string;
  /** Creates the folders of `path`; false when one of them is a symlink or not a folder. */
  makeFolders: () => Promise<boolean>;
  /** An upload that sends no body bytes for this long is given up. */
  idleMs: number;
}

/**
 * Writes `body` to `target`: exactly `length` bytes, checked against `options.md5` when given, written to the
 * temporary file, synced and linked into place, so the key never holds a partial object and a second writer
 * of the same key loses with 409. Returns the MD5 computed on the way with the size and mtime written. A body
 * that ends early (the client went away) leaves nothing; so does a body that stalls for `idleMs` (PutRejected
 * 408) and a write the file system refuses (StoreWriteError). The body is never destroyed here: on a refusal
 * the route still answers on its connection.
 */
export async function writeObject(
  target: WriteTarget,
  body: Readable,
  length: number,
  options: PutOptions = {},
): Promise<ChecksumRecord> {
  const { key, temp, path } = target;
  let handle: FileHandle | undefined;
  try {
    handle = await storeStep(() => open(temp, 'wx', 0o644));
    options.onReady?.();
    const { received, md5, crc32: crc } = await receive(body, handle, target.idleMs);
    if (received !== length) {
      throw new PutRejected(400, `Received ${received} bytes but Content-Length said ${length}.`);
    }
    if (options.md5 && !md5.equals(options.md5)) {
      throw new PutRejected(400, 'Content-MD5 does not match the bytes received; nothing was stored.');
    }
    const written = handle;
    // An acknowledged PUT survives a crash: the bytes reach the disk before the object is linked, and the
    // link before the answer. For 256 MiB this costs about a sixth of a loopback upload, less over a network.
    await storeStep(() => written.sync());
    const stats = await storeStep(() => written.stat());
    handle = undefined;
    await storeStep(() => written.close());
    if (!(await storeStep(() => target.makeFolders()))) {
      throw new PutRejected(
        400,
        `Refusing ${key}: one of its folders in the store is a symlink or not a folder.`,
      );
    }
    try {
      await link(temp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new PutRejected(409, `${key} already exists.`);
      }
      throw new StoreWriteError(error);
    }
    try {
      await syncFolder(dirname(path));
    } catch (error) {
      // Not acknowledged, so not kept: otherwise the client's next attempt would meet a 409.
      await unlink(path).catch(() => undefined);
      throw new StoreWriteError(error);
    }
    return { md5, crc32: crc, size: stats.size, mtimeMs: stats.mtimeMs };
  } finally {
    await handle?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
  }
}
