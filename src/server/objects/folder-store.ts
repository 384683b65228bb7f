/** The object store: objects are plain files under the store folder at their storage key. */
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, type Dirent, lstatSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { StoreError } from '../../core/errors.js';
import { openNoFollow } from '../../core/no-follow.js';
import { realPath } from '../../core/real-path.js';
import { removeFile } from '../../core/replace-file.js';
import { type MissionFile, parseName, parsePath } from '../../naming/names.js';
import {
  CHECKSUM_FOLDER,
  type ChecksumRecord,
  type Digests,
  digestsOfFile,
  readSidecar,
  writeSidecar,
} from './checksums.js';
import { freshFileSystem, STREAM_BUFFER_BYTES, writeObject } from './folder-write.js';
import {
  namingProblem,
  type ObjectStore,
  type OpenObject,
  type PresignOptions,
  type PutOptions,
  type PutResult,
  type SignedMethod,
  type StoredObject,
  type TakesUploads,
} from './object-store.js';
import { loadStoreSecret, UrlSigner } from './presign.js';
import { storeFolderError } from './store-folder.js';

/** The dot-folder holding uploads in progress; on the store's file system so the final link is atomic. */
export const INCOMING_FOLDER = '.incoming';

/** Temporary files older than this are leftovers of a crash and are removed at start. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** Default of `uploadIdleTimeoutMs`: an upload that sends no bytes for this long is given up. */
export const UPLOAD_IDLE_TIMEOUT_MS = 60_000;

/** Checksums kept in memory, so a GET of a hot object reads no sidecar; beyond this the oldest are forgotten. */
const CACHED_CHECKSUMS = 50_000;

/** Options of `FolderStore.open`. */
export interface FolderStoreOptions {
  /** An upload that sends no body bytes for this long is given up with 408; default 60 s. */
  uploadIdleTimeoutMs?: number | undefined;
  /** The secret pre-signed URLs are signed with; default the store's own (made on first use). */
  secret?: string | undefined;
}

/** Files under one store folder, addressed only by keys that passed the naming rules, served by the server itself. */
export class FolderStore implements ObjectStore, TakesUploads {
  /** Digests being computed, by key, size and mtime: concurrent first GETs of an object hash it once. */
  readonly #hashing = new Map<string, Promise<Digests>>();
  /** Digests known, by key; each use checks them against the open file's size and mtime. */
  readonly #checksums = new Map<string, ChecksumRecord>();
  /** What the store's file system refuses (hard links, syncing a folder), learned by the first PUT refused. */
  readonly #system = freshFileSystem();

  private constructor(
    /** The store folder, symlinks resolved. */
    readonly root: string,
    /** An upload that sends no body bytes for this long is given up. */
    readonly uploadIdleTimeoutMs: number,
    /** Signs the URLs of `presign` and checks those the object routes receive. */
    readonly signer: UrlSigner,
  ) {}

  get location(): string {
    return this.root;
  }

  async check(): Promise<void> {
    if (!(await lstat(this.root).catch(() => undefined))?.isDirectory())
      throw new StoreError(`The store folder ${this.root} is gone.`);
  }

  async close(): Promise<void> {}

  /** Opens (creating if needed) the store folder, its path resolved by the folder backend. */
  static async open(folder: string, options: FolderStoreOptions = {}): Promise<FolderStore> {
    const idle = options.uploadIdleTimeoutMs ?? UPLOAD_IDLE_TIMEOUT_MS;
    if (!Number.isFinite(idle) || idle <= 0 || idle > 2 ** 31 - 1) {
      throw new Error(`Invalid upload idle timeout ${idle}: give a number of milliseconds above 0.`);
    }
    try {
      await mkdir(folder, { recursive: true });
    } catch (error) {
      throw await storeFolderError(folder, error);
    }
    const root = await realPath(folder);
    const store = new FolderStore(root, idle, new UrlSigner(options.secret ?? (await loadStoreSecret(root))));
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
      if (stats && Date.now() - stats.mtimeMs > STALE_TEMP_MS) await removeFile(path).catch(() => undefined);
    }
  }

  /** A fresh temporary file in the incoming folder, ending in `.<extension>`. */
  #tempPath(extension: string): string {
    return join(this.root, INCOMING_FOLDER, `${randomBytes(12).toString('hex')}.${extension}`);
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
    return realPath(folder).then(
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
  async open(key: string): Promise<OpenObject | undefined> {
    const path = this.#pathOf(key);
    if (!(await this.#realFolder(key))) return undefined;
    let handle: FileHandle;
    try {
      handle = await openNoFollow(path, constants.O_RDONLY);
    } catch {
      return undefined;
    }
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      return undefined;
    }
    return {
      size: stats.size,
      mtime: stats.mtime,
      digests: () => this.#digestsOf(key, handle, stats),
      stream: (start, end) =>
        createReadStream('', { fd: handle, start, end, highWaterMark: STREAM_BUFFER_BYTES, autoClose: true }),
      close: () => handle.close(),
    };
  }

  async head(key: string): Promise<StoredObject | undefined> {
    const file = parsePath(key);
    if (!(await this.#realFolder(key))) return undefined;
    const stats = await lstat(this.#pathOf(key)).catch(() => undefined);
    return stats?.isFile() ? { file, size: stats.size, mtimeMs: stats.mtimeMs } : undefined;
  }

  async delete(key: string): Promise<boolean> {
    if (!(await this.head(key))) return false;
    await removeFile(this.#pathOf(key));
    const sidecar = await this.#sidecarPath(key, false);
    if (sidecar !== undefined) await removeFile(sidecar);
    this.#checksums.delete(key);
    return true;
  }

  async presign(method: SignedMethod, key: string, options: PresignOptions): Promise<string> {
    return this.signer.sign(options.baseUrl, method, key, Date.now(), options.lifetimeSeconds);
  }

  /**
   * Stores `body` at `key` (see `writeObject`: exactly `length` bytes, linked into place whole or not at all,
   * a second writer of the same key losing with 409) and keeps the MD5 of its bytes beside the object.
   */
  async put(key: string, body: Readable, length: number, options: PutOptions = {}): Promise<PutResult> {
    const file = parsePath(key);
    const target = {
      key,
      temp: this.#tempPath('part'),
      path: this.#pathOf(key),
      makeFolders: () => this.#safeFolders(key, true),
      idleMs: this.uploadIdleTimeoutMs,
      system: this.#system,
    };
    const record = await writeObject(target, body, length, options);
    // The sidecar only saves work: when it cannot be written, the first GET computes the digest again.
    await this.#saveChecksum(key, record).catch(() => undefined);
    return { file, ...record };
  }

  /**
   * The checksums of an open object: from memory or its sidecar when they were recorded for this size and mtime,
   * otherwise computed from the file (once, however many requests ask at the same time) and saved.
   */
  async #digestsOf(key: string, handle: FileHandle, stats: Stats): Promise<Digests> {
    const { size, mtimeMs } = stats;
    const known = this.#checksums.get(key);
    if (known && known.size === size && known.mtimeMs === mtimeMs) return known;
    const sidecar = await this.#sidecarPath(key, false);
    const saved = sidecar === undefined ? undefined : await readSidecar(sidecar, size, mtimeMs);
    if (saved) {
      this.#remember(key, { ...saved, size, mtimeMs });
      return saved;
    }
    const id = `${key}\n${size}\n${mtimeMs}`;
    let work = this.#hashing.get(id);
    if (!work) {
      work = (async () => {
        const digests = await digestsOfFile(handle, size);
        await this.#saveChecksum(key, { ...digests, size, mtimeMs }).catch(() => undefined);
        return digests;
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
    await writeSidecar(this.#tempPath('md5'), sidecar, record);
  }

  /**
   * Every object in the store layout; dot-files, temporary files, symlinks and stray files are skipped.
   * Folders are read asynchronously, but each folder's files are stat-ed synchronously: with 100,000 files
   * that is several times faster than one promise per file, and the event loop still turns between folders.
   */
  async list(prefix = '', onSkipped?: (key: string, problem: string) => void): Promise<StoredObject[]> {
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
          onSkipped?.(childKey, namingProblem(childKey) ?? 'breaks the naming rules');
          continue;
        }
        if (file.path !== childKey) {
          onSkipped?.(childKey, namingProblem(childKey) ?? `belongs at ${file.path}`);
          continue;
        }
        const stats = lstatSync(childPath, { throwIfNoEntry: false });
        if (stats?.isFile()) found.push({ file, size: stats.size, mtimeMs: stats.mtimeMs });
      }
    };
    await walk(this.root, '');
    return prefix === '' ? found : found.filter((object) => object.file.path.startsWith(prefix));
  }
}
