/** The object store's write path: a PUT body into a temporary file, hashed, synced and linked into place. */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, open, rename, unlink } from 'node:fs/promises';
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
    new BodyReceiver(body, handle, idleMs, resolvePromise, reject).listen();
  });
}

/**
 * One PUT body on its way into the temporary file: its digests so far, the chunks waiting for the next write,
 * and the timer that gives up on a stalled client. Its listeners are made once per body, none per chunk.
 */
class BodyReceiver {
  readonly #hash = createHash('md5');
  #crc = 0;
  #received = 0;
  #written = 0;
  /** Chunks that arrived while a write was under way, and their bytes. */
  #queue: Buffer[] = [];
  #queued = 0;
  #writing = false;
  #ended = false;
  #settled = false;
  readonly #idle: NodeJS.Timeout;

  constructor(
    readonly body: Readable,
    readonly handle: FileHandle,
    readonly idleMs: number,
    readonly resolve: (received: Received) => void,
    readonly reject: (error: unknown) => void,
  ) {
    this.#idle = setTimeout(this.#onIdle, idleMs);
  }

  /** Starts taking the body's events. */
  listen(): void {
    this.body
      .on('data', this.#onData)
      .on('end', this.#onEnd)
      .on('error', this.#onBodyError)
      .on('close', this.#onBodyClose);
  }

  /** No bytes for `idleMs`: a 408, unless the body is paused because the disk is behind. */
  readonly #onIdle = (): void => {
    if (this.body.isPaused()) {
      this.#idle.refresh();
      return;
    }
    const seconds = Number((this.idleMs / 1000).toFixed(3));
    this.#settle(
      new PutRejected(
        408,
        `No bytes of the body arrived for ${seconds} s: the upload was given up and nothing was stored.`,
      ),
    );
  };

  readonly #onData = (chunk: Buffer): void => {
    this.#received += chunk.length;
    this.#hash.update(chunk);
    this.#crc = crc32(chunk, this.#crc);
    this.#idle.refresh();
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    if (this.#queued >= STREAM_BUFFER_BYTES) this.body.pause();
    if (!this.#writing) void this.#pump();
  };

  readonly #onEnd = (): void => {
    this.#ended = true;
    clearTimeout(this.#idle);
    if (!this.#writing) this.#settle(undefined);
  };

  readonly #onBodyError = (error: Error): void => this.#settle(error);

  readonly #onBodyClose = (): void => {
    if (!this.body.readableEnded)
      this.#settle(new Error('The client closed the connection before the whole body arrived.'));
  };

  /** Writes what waits, batch after batch, until nothing waits; settles when the body has ended meanwhile. */
  async #pump(): Promise<void> {
    this.#writing = true;
    while (this.#queue.length > 0 && !this.#settled) {
      const chunks = this.#queue;
      const bytes = this.#queued;
      this.#queue = [];
      this.#queued = 0;
      if (!this.#ended) this.body.resume();
      try {
        await writeAll(this.handle, chunks, this.#written);
      } catch (error) {
        this.#settle(new StoreWriteError(error));
        return;
      }
      this.#written += bytes;
    }
    this.#writing = false;
    if (this.#ended) this.#settle(undefined);
  }

  /** Ends the receiving once: the listeners off, the body left paused, the digests or `error` handed on. */
  #settle(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#idle);
    this.body
      .off('data', this.#onData)
      .off('end', this.#onEnd)
      .off('error', this.#onBodyError)
      .off('close', this.#onBodyClose);
    this.body.pause();
    if (error === undefined) {
      this.resolve({ received: this.#received, md5: this.#hash.digest(), crc32: this.#crc });
    } else this.reject(error);
  }
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

/**
 * What the store's file system was found to refuse, learned on the first refusal and kept for the store's life:
 * each PUT then takes the way that works without asking again.
 */
export interface StoreFileSystem {
  /** False once `link()` was refused (exFAT and FAT have no hard links). */
  links: boolean;
  /** False once opening or syncing a folder was refused (Windows). */
  folderSync: boolean;
}

/** A file system not yet found to refuse anything. */
export function freshFileSystem(): StoreFileSystem {
  return { links: true, folderSync: true };
}

/** What a file system without hard links answers `link()` (exFAT: EPERM; others ENOTSUP, EOPNOTSUPP, ENOSYS). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/** What a system that cannot open or sync a folder answers (Windows: EPERM or EISDIR; some file systems EINVAL). */
const NO_FOLDER_SYNC = new Set(['EPERM', 'EACCES', 'EISDIR', 'EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EBADF']);

/** The test's stand-ins for the file-system calls of a commit, to inject the refusals other systems give. */
export const commitOps = { link, open, rename };

/**
 * Flushes a folder's entries to disk, so that a link just made in it survives a crash. Where the system refuses
 * to open or sync a folder (Windows, which makes a rename durable itself), that is learned once and the sync
 * skipped from then on; the upload never fails for it.
 */
async function syncFolder(folder: string, system: StoreFileSystem): Promise<void> {
  if (!system.folderSync) return;
  try {
    const handle = await commitOps.open(folder, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (!NO_FOLDER_SYNC.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    system.folderSync = false;
  }
}

/**
 * Puts the synced temporary file at `path` only if nothing is there: `link()` fails with EEXIST when a file is,
 * so of two PUTs of one key exactly one wins. Without hard links (exFAT, FAT) the key's name is claimed by an
 * exclusive create (O_EXCL, the same atomic test), and only the claimant renames the bytes over its own empty
 * claim. A rename after a look for an existing file would not do: two PUTs could both look, both find nothing,
 * and the second rename would replace the first's acknowledged object. What the claim costs: for the moment
 * between the create and the rename (microseconds; the bytes are synced already) the key names an empty file,
 * and a crash in that moment leaves it empty (a later PUT gets 409; DELETE clears it). Returns false when the key
 * is taken.
 */
async function placeExclusively(temp: string, path: string, system: StoreFileSystem): Promise<boolean> {
  if (system.links) {
    try {
      await commitOps.link(temp, path);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') return false;
      if (!NO_LINKS.has(code)) throw error;
      system.links = false;
    }
  }
  let claim: FileHandle;
  try {
    claim = await commitOps.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  await claim.close();
  try {
    await commitOps.rename(temp, path);
  } catch (error) {
    await unlink(path).catch(() => undefined);
    throw error;
  }
  return true;
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
  /** What the store's file system refuses, learned by earlier PUTs (and by this one). */
  system: StoreFileSystem;
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
    const placed = await storeStep(() => placeExclusively(temp, path, target.system));
    if (!placed) throw new PutRejected(409, `${key} already exists.`);
    try {
      await syncFolder(dirname(path), target.system);
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
