/** The object store: objects are plain files under the store folder at their storage key. */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream, type Dirent, lstatSync, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, realpath, rm, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { StoreError } from '../errors.js';
import { type MissionFile, parseName, parsePath } from '../naming.js';
import { CHECKSUM_FOLDER, type ChecksumRecord, md5OfFile, readSidecar, writeSidecar } from './checksums.js';

/** Stream buffer size for object reads and writes: ~1 MiB keeps the server off the critical path. */
export const STREAM_BUFFER_BYTES = 1024 * 1024;

/** The dot-folder holding uploads in progress; on the store's file system so the final link is atomic. */
export const INCOMING_FOLDER = '.incoming';

/** Temporary files older than this are leftovers of a crash and are removed at start. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** Default of `uploadIdleTimeoutMs`: an upload that sends no bytes for this long is given up. */
export const UPLOAD_IDLE_TIMEOUT_MS = 60_000;

/** Checksums kept in memory, so a GET of a hot object reads no sidecar; beyond this the oldest are forgotten. */
const CACHED_CHECKSUMS = 50_000;

/** A stored object found by a scan or written by a PUT. */
export interface StoredObject {
  file: MissionFile;
  size: number;
  mtimeMs: number;
}

/** An object a PUT stored, with the MD5 of its bytes. */
export interface PutResult extends StoredObject {
  md5: Buffer;
}

/** How a PUT body is taken in. */
export interface PutOptions {
  /** The raw Content-MD5 digest the client sent, checked against the bytes. */
  md5?: Buffer | undefined;
  /** Called once the temporary file is open and before the body is read (the route sends 100 Continue then). */
  onReady?: (() => void) | undefined;
}

/** Options of `ObjectStore.open`. */
export interface ObjectStoreOptions {
  /** An upload that sends no body bytes for this long is given up with 408; default 60 s. */
  uploadIdleTimeoutMs?: number | undefined;
}

/** An object opened for reading: its descriptor and its stat, taken from the same open file. */
export interface OpenObject {
  handle: FileHandle;
  stats: Stats;
}

/** Why a PUT did not store its object, when the request is to blame. */
export class PutRejected extends Error {
  constructor(
    readonly status: 400 | 408 | 409,
    message: string,
  ) {
    super(message);
  }
}

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

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** The outcome of taking in a PUT body. */
interface Received {
  received: number;
  md5: Buffer;
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
      if (error === undefined) resolvePromise({ received, md5: hash.digest() });
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

/** Files under one store folder, addressed only by keys that passed the naming rules. */
export class ObjectStore {
  /** Digests being computed, by key, size and mtime: concurrent first GETs of an object hash it once. */
  readonly #hashing = new Map<string, Promise<Buffer>>();
  /** Digests known, by key; each use checks them against the open file's size and mtime. */
  readonly #checksums = new Map<string, ChecksumRecord>();

  private constructor(
    /** The store folder, symlinks resolved. */
    readonly root: string,
    /** An upload that sends no body bytes for this long is given up. */
    readonly uploadIdleTimeoutMs: number,
  ) {}

  /** Opens (creating if needed) the store folder. */
  static async open(storeDir: string, options: ObjectStoreOptions = {}): Promise<ObjectStore> {
    const idle = options.uploadIdleTimeoutMs ?? UPLOAD_IDLE_TIMEOUT_MS;
    if (!Number.isFinite(idle) || idle <= 0 || idle > 2 ** 31 - 1) {
      throw new Error(`Invalid upload idle timeout ${idle}: give a number of milliseconds above 0.`);
    }
    const folder = resolve(storeDir);
    try {
      await mkdir(folder, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new StoreError(`Cannot use ${folder} as the store folder (${code}).`, { cause: error });
    }
    const store = new ObjectStore(await realpath(folder), idle);
    const incoming = join(store.root, INCOMING_FOLDER);
    await mkdir(incoming).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // Uploads are written here before they are linked into place: a symlink would send them outside the store.
    if (!(await lstat(incoming)).isDirectory()) {
      throw new StoreError(`${incoming} must be a folder of the store, not a symlink or a file; remove it.`);
    }
    await store.#removeStaleTemps();
    return store;
  }

  async #removeStaleTemps(): Promise<void> {
    const folder = join(this.root, INCOMING_FOLDER);
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      const stats = await lstat(path).catch(() => undefined);
      if (stats && Date.now() - stats.mtimeMs > STALE_TEMP_MS) await rm(path, { force: true });
    }
  }

  /** The file path of a key; the key must be a valid storage path (checked again here). */
  #pathOf(key: string): string {
    const file = parsePath(key);
    return join(this.root, ...file.path.split('/'));
  }

  /**
   * Walks the folders of `key` below the store (below `base`, a folder of the store, when given), refusing
   * symlinks on the way (so nothing placed in the store can lead a read or a write outside it) and creating
   * missing folders when `create` is set. Returns false when a folder is missing (and `create` is false) or
   * is not a real folder.
   */
  async #safeFolders(key: string, create: boolean, base?: string): Promise<boolean> {
    const segments = [...(base === undefined ? [] : [base]), ...key.split('/').slice(0, -1)];
    let folder = this.root;
    for (const segment of segments) {
      folder = join(folder, segment);
      let stats = await lstat(folder).catch(() => undefined);
      if (!stats && create) {
        await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
        stats = await lstat(folder).catch(() => undefined);
      }
      if (!stats?.isDirectory()) return false;
    }
    return true;
  }

  /**
   * True when the folder of `key` (below `base` when given) exists and no part of the way to it is a symlink:
   * the store's root has its symlinks resolved, so the folder's real path is its plain path exactly when
   * nothing on the way leads elsewhere. One call where `#safeFolders` needs one per folder; for reads.
   */
  async #realFolder(key: string, base?: string): Promise<boolean> {
    const folder = join(this.root, ...(base === undefined ? [] : [base]), ...key.split('/').slice(0, -1));
    return realpath(folder).then(
      (real) => real === folder,
      () => false,
    );
  }

  /** True when something (a file, a symlink, anything) occupies the key's place. */
  async occupied(key: string): Promise<boolean> {
    const path = this.#pathOf(key);
    if (!(await this.#safeFolders(key, false))) return false;
    return lstat(path).then(
      () => true,
      () => false,
    );
  }

  /** Opens a stored regular file for reading; undefined when there is none (symlinks are never followed). */
  async openForRead(key: string): Promise<OpenObject | undefined> {
    const path = this.#pathOf(key);
    if (!(await this.#realFolder(key))) return undefined;
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | NO_FOLLOW);
    } catch {
      return undefined;
    }
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      return undefined;
    }
    return { handle, stats };
  }

  /** A read stream over an open object, from `start` to `end` inclusive; it closes the file when done. */
  readStream(object: OpenObject, start: number, end: number): Readable {
    return createReadStream('', {
      fd: object.handle,
      start,
      end,
      highWaterMark: STREAM_BUFFER_BYTES,
      autoClose: true,
    });
  }

  /**
   * Stores `body` at `key`: exactly `length` bytes, checked against `options.md5` when given, written to a
   * temporary file and linked into place, so the key never holds a partial object and a second writer of
   * the same key loses with 409. The MD5 of the bytes is always computed on the way and kept beside the
   * object. A body that ends early (the client went away) leaves nothing; so does a body that stalls for
   * `uploadIdleTimeoutMs` (PutRejected 408) and a write the file system refuses (StoreWriteError). The body
   * is never destroyed here: on a refusal the route still answers on its connection.
   */
  async put(key: string, body: Readable, length: number, options: PutOptions = {}): Promise<PutResult> {
    const file = parsePath(key);
    const path = this.#pathOf(key);
    const temp = join(this.root, INCOMING_FOLDER, `${randomBytes(12).toString('hex')}.part`);
    let handle: FileHandle | undefined;
    try {
      handle = await storeStep(() => open(temp, 'wx', 0o644));
      options.onReady?.();
      const { received, md5 } = await receive(body, handle, this.uploadIdleTimeoutMs);
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
      if (!(await storeStep(() => this.#safeFolders(key, true)))) {
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
      const record = { md5, size: stats.size, mtimeMs: stats.mtimeMs };
      // The sidecar only saves work: when it cannot be written, the first GET computes the digest again.
      await this.#saveChecksum(key, record).catch(() => undefined);
      return { file, ...record };
    } finally {
      await handle?.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
    }
  }

  /**
   * The MD5 of an open object: from memory or its sidecar when they were recorded for this size and mtime,
   * otherwise computed from the file (once, however many requests ask at the same time) and saved.
   */
  async md5Of(key: string, object: OpenObject): Promise<Buffer> {
    const { size, mtimeMs } = object.stats;
    const known = this.#checksums.get(key);
    if (known && known.size === size && known.mtimeMs === mtimeMs) return known.md5;
    const sidecar = await this.#sidecarPath(key, false);
    const saved = sidecar === undefined ? undefined : await readSidecar(sidecar, size, mtimeMs);
    if (saved) {
      this.#remember(key, { md5: saved, size, mtimeMs });
      return saved;
    }
    const id = `${key}\n${size}\n${mtimeMs}`;
    let work = this.#hashing.get(id);
    if (!work) {
      work = (async () => {
        const md5 = await md5OfFile(object.handle, size);
        await this.#saveChecksum(key, { md5, size, mtimeMs }).catch(() => undefined);
        return md5;
      })().finally(() => this.#hashing.delete(id));
      this.#hashing.set(id, work);
    }
    return work;
  }

  #remember(key: string, record: ChecksumRecord): void {
    this.#checksums.delete(key);
    if (this.#checksums.size >= CACHED_CHECKSUMS) {
      const oldest = this.#checksums.keys().next();
      if (!oldest.done) this.#checksums.delete(oldest.value);
    }
    this.#checksums.set(key, record);
  }

  /** Where the sidecar of `key` lives, its folders checked (and created when `create`); undefined when unsafe. */
  async #sidecarPath(key: string, create: boolean): Promise<string | undefined> {
    const safe = create
      ? await this.#safeFolders(key, true, CHECKSUM_FOLDER)
      : await this.#realFolder(key, CHECKSUM_FOLDER);
    return safe ? join(this.root, CHECKSUM_FOLDER, ...key.split('/')) : undefined;
  }

  async #saveChecksum(key: string, record: ChecksumRecord): Promise<void> {
    this.#remember(key, record);
    const sidecar = await this.#sidecarPath(key, true);
    if (sidecar === undefined) return;
    const temp = join(this.root, INCOMING_FOLDER, `${randomBytes(12).toString('hex')}.md5`);
    await writeSidecar(temp, sidecar, record);
  }

  /**
   * Every object in the store layout; dot-files, temporary files, symlinks and stray files are skipped.
   * Folders are read asynchronously, but each folder's files are stat-ed synchronously: with 100,000 files
   * that is several times faster than one promise per file, and the event loop still turns between folders.
   */
  async scan(): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    const walk = async (folder: string, key: string): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        if (entry.name.startsWith('.')) continue;
        const childKey = key === '' ? entry.name : `${key}/${entry.name}`;
        const childPath = join(folder, entry.name);
        if (entry.isDirectory()) {
          await walk(childPath, childKey);
          continue;
        }
        if (!entry.isFile()) continue;
        let file: MissionFile;
        try {
          // The key comes from real folder entries, so checking the name and that its path is this key
          // is the whole of parsePath.
          file = parseName(entry.name);
        } catch {
          continue;
        }
        if (file.path !== childKey) continue;
        const stats = lstatSync(childPath, { throwIfNoEntry: false });
        if (stats?.isFile()) found.push({ file, size: stats.size, mtimeMs: stats.mtimeMs });
      }
    };
    await walk(this.root, '');
    return found;
  }
}
