/** The object store: objects are plain files under the store folder at their storage key. */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream, createWriteStream, type Dirent, lstatSync, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, realpath, rm, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ExitCode, MissionDataError } from '../errors.js';
import { type MissionFile, parseName, parsePath } from '../naming.js';

/** Stream buffer size for object reads and writes: ~1 MiB keeps the server off the critical path. */
export const STREAM_BUFFER_BYTES = 1024 * 1024;

/** The dot-folder holding uploads in progress; on the store's file system so the final link is atomic. */
export const INCOMING_FOLDER = '.incoming';

/** Temporary files older than this are leftovers of a crash and are removed at start. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** A stored object found by a scan or written by a PUT. */
export interface StoredObject {
  file: MissionFile;
  size: number;
  mtimeMs: number;
}

/** An object opened for reading: its descriptor and its stat, taken from the same open file. */
export interface OpenObject {
  handle: FileHandle;
  stats: Stats;
}

/** Why a PUT did not store its object. */
export class PutRejected extends Error {
  constructor(
    readonly status: 400 | 409,
    message: string,
  ) {
    super(message);
  }
}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** A store folder the server cannot use: a setup problem, not a bug. */
export function storeError(message: string, cause?: unknown): MissionDataError {
  return new MissionDataError(message, 'E_STORE', ExitCode.Failure, { cause });
}

/** The strong validator of an object, the same for PUT, GET and after a restart: size and mtime. */
export function objectEtag(size: number, mtimeMs: number): string {
  return `"${size.toString(16)}-${Math.trunc(mtimeMs * 1000).toString(16)}"`;
}

/** Files under one store folder, addressed only by keys that passed the naming rules. */
export class ObjectStore {
  private constructor(
    /** The store folder, symlinks resolved. */
    readonly root: string,
  ) {}

  /** Opens (creating if needed) the store folder. */
  static async open(storeDir: string): Promise<ObjectStore> {
    const folder = resolve(storeDir);
    try {
      await mkdir(folder, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw storeError(`Cannot use ${folder} as the store folder (${code}).`, error);
    }
    const store = new ObjectStore(await realpath(folder));
    const incoming = join(store.root, INCOMING_FOLDER);
    await mkdir(incoming).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // Uploads are written here before they are linked into place: a symlink would send them outside the store.
    if (!(await lstat(incoming)).isDirectory()) {
      throw storeError(`${incoming} must be a folder of the store, not a symlink or a file; remove it.`);
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
   * Walks the folders of `key` below the store, refusing symlinks on the way (so nothing placed in the store
   * can lead a read or a write outside it) and creating missing folders when `create` is set. Returns
   * false when a folder is missing (and `create` is false) or is not a real folder.
   */
  async #safeFolders(key: string, create: boolean): Promise<boolean> {
    const segments = key.split('/').slice(0, -1);
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
    if (!(await this.#safeFolders(key, false))) return undefined;
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
   * Stores `body` at `key`: exactly `length` bytes, checked against `md5` (raw digest) when given, written
   * to a temporary file and linked into place, so the key never holds a partial object and a second
   * writer of the same key loses with 409. A body that ends early (the client went away) leaves nothing.
   */
  async put(key: string, body: Readable, length: number, md5: Buffer | undefined): Promise<StoredObject> {
    const file = parsePath(key);
    const path = this.#pathOf(key);
    const temp = join(this.root, INCOMING_FOLDER, `${randomBytes(12).toString('hex')}.part`);
    const hash = md5 ? createHash('md5') : undefined;
    let received = 0;
    try {
      const out = createWriteStream(temp, { flags: 'wx', highWaterMark: STREAM_BUFFER_BYTES });
      await pipeline(
        body,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            received += chunk.length;
            hash?.update(chunk);
            yield chunk;
          }
        },
        out,
      );
      if (received !== length) {
        throw new PutRejected(400, `Received ${received} bytes but Content-Length said ${length}.`);
      }
      if (md5 && hash && !hash.digest().equals(md5)) {
        throw new PutRejected(400, 'Content-MD5 does not match the bytes received; nothing was stored.');
      }
      if (!(await this.#safeFolders(key, true))) {
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
        throw error;
      }
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    const stats = await lstat(path);
    return { file, size: stats.size, mtimeMs: stats.mtimeMs };
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
