/**
 * The download engine: fetches stored files into the local data root. Each file streams to a part file of
 * this process, is checked against the store's checksum as it arrives, and becomes the destination only once
 * every byte has arrived and matched (see `part-file.ts` and `receive.ts`). A file verified before and
 * unchanged since is skipped without a request; any other file at a destination is checked against the store.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortedError, BatchStop, failureOf, linkSignal, runPool } from './batch.js';
import { isMissionDataError, LocalFileError, ValidationError } from './errors.js';
import { sameAsStored, sumOf } from './existing-file.js';
import { sleep } from './http/retry.js';
import { type LocatedFile, locateFile, resolveLocalPath } from './layout.js';
import { checkWritableRoot, ensureFolderInside, folderStaysInside } from './local-root.js';
import { PartBusy, PartFile } from './part-file.js';
import { DEFAULT_CONNECTIONS, DEFAULT_PART_SIZE } from './ranged.js';
import { ChecksumMismatch, initialState, receiveObject } from './receive.js';
import type { HttpClient } from './service.js';
import { VerifiedRecord } from './verified.js';

/** Progress of one file: sent while bytes arrive, and once more with `done` when the file is settled. */
export interface DownloadProgress {
  path: string;
  localPath: string;
  received: number;
  total: number | undefined;
  done?: DownloadResult['status'];
  /** With `done`: whether the bytes were checked against the store's checksum. */
  verified?: boolean;
  /** With `done: 'failed'`: why. */
  error?: Error;
}

/** How to download. */
export interface DownloadOptions {
  /** The local data root; every destination is resolved below it from the file's name. */
  dataDir: string;
  /** Download files again even when a verified copy is in place (otherwise it is skipped). */
  force?: boolean | undefined;
  /** Files downloaded at once; default 8. */
  concurrency?: number | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((event: DownloadProgress) => void) | undefined;
  /** Called once the targets are checked, with the number of distinct files to transfer. */
  onStart?: ((files: number) => void) | undefined;
  /** Resumes (Range requests) allowed per file after a dropped connection; default 5. */
  maxResumes?: number | undefined;
  /** Connections one large file is fetched over at once, in parts; default 8 (1: one stream). */
  connections?: number | undefined;
  /** Bytes per part of a large file; default 16 MiB. Files of at least two parts are split. */
  partSize?: number | undefined;
}

/**
 * The outcome for one file: `downloaded` (it was not there), `replaced` (a file that was there did not hold the
 * stored bytes, or `force` asked for it), `skipped` (a verified copy is in place) or `failed`.
 */
export interface DownloadResult {
  path: string;
  localPath: string;
  status: 'downloaded' | 'replaced' | 'skipped' | 'failed';
  /** Bytes of the file received over the network in this run (0 when skipped; less than its size after a resume). */
  bytes: number;
  /** True when the file's bytes were checked against the store's checksum (always, for a skipped file). */
  verified: boolean;
  error?: Error;
}

/** The part of the HTTP client the download engine uses. */
export type DownloadHttp = Pick<HttpClient, 'resolveDownload' | 'getObject'>;

/** Default number of files downloaded at once. */
export const DEFAULT_DOWNLOAD_CONCURRENCY = 8;

const DEFAULT_MAX_RESUMES = 5;

/**
 * Downloads files into the data root. `targets` are storage paths or bare names, validated with the naming
 * rules before any request (a `ValidationError` lists every bad one); the same file given twice is fetched
 * once. Never throws for a single file's failure: each result carries its status and error.
 */
export async function downloadFiles(
  http: DownloadHttp,
  targets: readonly string[],
  options: DownloadOptions,
): Promise<DownloadResult[]> {
  const files = planDownloads(targets, options.dataDir);
  // Before anything is asked of the service: a data root that cannot take files is one error, not one per file.
  await checkWritableRoot(options.dataDir);
  options.onStart?.(files.length);
  const results: DownloadResult[] = new Array(files.length);
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_DOWNLOAD_CONCURRENCY));
  const link = linkSignal(options.signal, concurrency);
  const batch: Batch = {
    http,
    options: link ? { ...options, signal: link.signal } : options,
    folders: new FolderCache(options.dataDir),
    stop: new BatchStop(),
    verified: await VerifiedRecord.open(options.dataDir),
    realRoot: await realpath(options.dataDir),
  };
  const lookups = new Lookups(batch, files, concurrency);
  try {
    await runPool(files.length, concurrency, async (index) => {
      const result = await downloadOne(batch, files[index] as PlannedDownload, lookups.take(index));
      batch.stop.note(result.error);
      results[index] = result;
      options.onProgress?.({
        path: result.path,
        localPath: result.localPath,
        received: result.bytes,
        total: result.status === 'failed' ? undefined : result.bytes,
        done: result.status,
        verified: result.verified,
        ...(result.error ? { error: result.error } : {}),
      });
    });
  } finally {
    link?.dispose();
    batch.verified.close();
  }
  return results;
}

/** What a download would do with one file: fetch it, skip it (a verified copy is in place) or check it first. */
export interface DownloadPreview {
  path: string;
  localPath: string;
  /** `check`: a file is at the destination but not recorded as verified; it is compared with the store. */
  action: 'fetch' | 'skip' | 'check';
  /** Size of the file at the destination, when there is one. */
  localSize?: number;
}

/** What `downloadFiles` would do with each target (a dry run): names are checked, nothing is requested. */
export async function previewDownloads(
  targets: readonly string[],
  options: Pick<DownloadOptions, 'dataDir' | 'force'>,
): Promise<DownloadPreview[]> {
  const files = planDownloads(targets, options.dataDir);
  const verified = await VerifiedRecord.open(options.dataDir);
  try {
    return await Promise.all(
      files.map(async ({ file, localPath }): Promise<DownloadPreview> => {
        const present = await lstat(localPath).catch(() => undefined);
        if (!present) return { path: file.path, localPath, action: 'fetch' };
        const action = options.force
          ? 'fetch'
          : verified.matches(file.path, present)
            ? 'skip'
            : present.isFile()
              ? 'check'
              : 'fetch';
        return { path: file.path, localPath, action, localSize: present.size };
      }),
    );
  } finally {
    verified.close();
  }
}

interface PlannedDownload {
  file: LocatedFile;
  localPath: string;
}

/** What every file of one batch shares. */
interface Batch {
  http: DownloadHttp;
  options: DownloadOptions;
  folders: FolderCache;
  stop: BatchStop;
  verified: VerifiedRecord;
  /** The data root's real path (it may itself be a link). */
  realRoot: string;
}

/**
 * Validates every target and resolves its destination; the first occurrence of a file wins. A storage path of a
 * naming form this version does not know is downloaded to that path below the root (see `locateFile`).
 */
function planDownloads(targets: readonly string[], dataDir: string): PlannedDownload[] {
  const problems: string[] = [];
  const hints = new Set<string>();
  const planned = new Map<string, PlannedDownload>();
  for (const target of targets) {
    let file: LocatedFile;
    try {
      file = locateFile(target);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const problem of error.problems) problems.push(`${target}: ${problem}`);
      // The client's suggestions (did you mean mag?) ride along as the hint.
      if (error.hint) hints.add(error.hint);
      continue;
    }
    if (!planned.has(file.path)) planned.set(file.path, { file, localPath: resolveLocalPath(dataDir, file) });
  }
  if (problems.length > 0) {
    throw new ValidationError(problems, hints.size > 0 ? { hint: [...hints].join(' ') } : {});
  }
  return [...planned.values()];
}

/**
 * Folders made safe in this batch: files of one product share their month folder, and walking it (with its
 * symbolic-link check) per file is a measurable part of downloading many small files.
 */
class FolderCache {
  private readonly made = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(private readonly root: string) {}

  /** Makes the folder safe to write in; resolves to the names of the parts it held then. */
  ensure(folder: string): Promise<ReadonlySet<string>> {
    let made = this.made.get(folder);
    if (!made) {
      made = ensureFolderInside(this.root, folder).then(() => partsIn(folder));
      made.catch(() => this.made.delete(folder));
      this.made.set(folder, made);
    }
    return made;
  }
}

/** The names of the parts in a folder: the leftovers a file's claim looks at. */
async function partsIn(folder: string): Promise<ReadonlySet<string>> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return new Set(names.filter((name) => name.includes('.part.')));
}

/** Files at least this large are recorded as verified at once: another process may be waiting for them. */
const IMMEDIATE_RECORD_BYTES = 1024 * 1024;

/** How long to wait between looks at a part another process is writing. */
const BUSY_POLL_MS = 250;

/** What a file needs before its bytes are fetched: nothing (a verified copy), or the object's address. */
type Lookup =
  | { kind: 'skip' }
  | { kind: 'stopped'; error: Error }
  | { kind: 'fetch'; url: string; present: Stats | undefined };

/** Looks a file up: a verified copy in place is skipped without a request; otherwise the service names the object. */
async function lookUp(batch: Batch, { file, localPath }: PlannedDownload): Promise<Lookup> {
  const { options } = batch;
  if (options.signal?.aborted) throw abortedError(options.signal);
  const present = await lstat(localPath).catch(() => undefined);
  if (!options.force && present && batch.verified.matches(file.path, present)) return { kind: 'skip' };
  const stopped = batch.stop.notAttempted();
  if (stopped) return { kind: 'stopped', error: stopped };
  const url = await batch.http.resolveDownload(file.path, options.signal);
  return { kind: 'fetch', url, present };
}

/**
 * Look-ups run ahead of the transfers, up to `concurrency` files beyond those started, so a file's address is
 * known by the time a connection is free for it: a batch of small files then waits one round trip per file
 * instead of two. Only once the service has answered one: a service that cannot be reached is asked no more
 * than without look-ahead.
 */
class Lookups {
  readonly #started = new Map<number, Promise<Lookup>>();
  #ahead = false;

  constructor(
    private readonly batch: Batch,
    private readonly files: readonly PlannedDownload[],
    private readonly concurrency: number,
  ) {}

  /** The look-up of file `index`, started now unless it ran ahead; starts the ones after it when it may. */
  take(index: number): Promise<Lookup> {
    const lookup = this.#start(index);
    if (this.#ahead) this.#runAhead(index);
    else {
      lookup.then(
        (found) => {
          if (found.kind !== 'fetch') return;
          this.#ahead = true;
          this.#runAhead(index);
        },
        () => undefined,
      );
    }
    return lookup;
  }

  #runAhead(index: number): void {
    const last = Math.min(this.files.length - 1, index + this.concurrency);
    for (let next = index + 1; next <= last; next += 1) this.#start(next);
  }

  #start(index: number): Promise<Lookup> {
    let lookup = this.#started.get(index);
    if (!lookup) {
      lookup = lookUp(this.batch, this.files[index] as PlannedDownload);
      // Heard by the file's own transfer when it starts; a batch cancelled before then never asks.
      lookup.catch(() => undefined);
      this.#started.set(index, lookup);
    }
    return lookup;
  }
}

async function downloadOne(
  batch: Batch,
  { file, localPath }: PlannedDownload,
  lookup: Promise<Lookup>,
): Promise<DownloadResult> {
  const result = (
    status: DownloadResult['status'],
    bytes: number,
    verified: boolean,
    error?: Error,
  ): DownloadResult =>
    error
      ? { path: file.path, localPath, status, bytes, verified, error }
      : { path: file.path, localPath, status, bytes, verified };
  const { http, options } = batch;
  const signal = options.signal;
  try {
    const found = await lookup;
    if (signal?.aborted) throw abortedError(signal);
    if (found.kind === 'skip') return result('skipped', 0, true);
    if (found.kind === 'stopped') return result('failed', 0, false, found.error);
    const { url, present } = found;
    if (!options.force && present?.isFile()) {
      const verifiedBy = await sameAsStored(http, url, localPath, present, signal);
      if (verifiedBy) {
        batch.verified.add(file.path, present, sumOf(verifiedBy));
        return result('skipped', 0, true);
      }
    }
    let listed: ReadonlySet<string> | undefined = await batch.folders.ensure(dirname(localPath));
    for (;;) {
      try {
        const part = await PartFile.claim(localPath, listed);
        return await fetchInto(part, url, present);
      } catch (error) {
        if (!(error instanceof PartBusy)) throw error;
      }
      // Another process is downloading this file: wait for it, then look again (its copy is verified).
      listed = undefined;
      await sleep(BUSY_POLL_MS, signal);
      await batch.verified.refresh();
      const now = await lstat(localPath).catch(() => undefined);
      if (!options.force && now && batch.verified.matches(file.path, now)) return result('skipped', 0, true);
    }
  } catch (error) {
    return result('failed', 0, false, failureOf(error, signal));
  }

  async function fetchInto(part: PartFile, url: string, present: Stats | undefined): Promise<DownloadResult> {
    let state = initialState(part);
    try {
      let received: Awaited<ReturnType<typeof receiveObject>>;
      const receive = () =>
        receiveObject({
          http,
          url,
          part,
          state,
          signal,
          maxResumes: options.maxResumes ?? DEFAULT_MAX_RESUMES,
          ranged: {
            connections: Math.max(1, Math.floor(options.connections ?? DEFAULT_CONNECTIONS)),
            partSize: Math.max(64 * 1024, Math.floor(options.partSize ?? DEFAULT_PART_SIZE)),
          },
          onBytes: (bytes, total) =>
            options.onProgress?.({ path: file.path, localPath, received: bytes, total }),
        });
      try {
        received = await receive();
      } catch (error) {
        if (!(error instanceof ChecksumMismatch)) throw error;
        // Once more from the first byte: a damaged transfer passes the second time, a damaged object does not.
        part.truncate();
        state = { written: 0, total: undefined, etag: undefined };
        received = await receive();
      }
      if (!folderStaysInside(batch.realRoot, localPath)) {
        throw new LocalFileError(
          `Refusing to move ${part.path} into place: its folder now leads outside the data root.`,
          { code: 'E_UNSAFE_PATH' },
        );
      }
      const stats = await part.commit();
      if (received.verifiedBy) {
        batch.verified.add(
          file.path,
          stats,
          sumOf(received.verifiedBy),
          received.size >= IMMEDIATE_RECORD_BYTES,
        );
      }
      return result(
        present ? 'replaced' : 'downloaded',
        received.transferred,
        received.verifiedBy !== undefined,
      );
    } catch (error) {
      // An interrupted or dropped transfer leaves its part for the next run to resume; anything else is discarded.
      if (resumable(error, signal))
        part.keep({ etag: state.etag, size: state.total, written: state.written, parts: state.finished });
      else await part.discard();
      throw error;
    }
  }
}

function resumable(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  return (
    isMissionDataError(error) &&
    (error.code === 'E_INCOMPLETE' || error.code === 'E_TIMEOUT' || error.code === 'E_NETWORK')
  );
}
