/**
 * The download engine: fetches stored files into the local data root. Each file streams to its part file,
 * which becomes the destination only once every byte has arrived (see `part-file.ts` and `receive.ts`).
 */
import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortedError, BatchStop, failureOf, linkSignal, runPool } from './batch.js';
import { ValidationError } from './errors.js';
import { resolveLocalPath } from './layout.js';
import { type MissionFile, parsePathOrName } from './naming.js';
import { localError, PartFile } from './part-file.js';
import { receiveObject } from './receive.js';
import type { HttpClient } from './service.js';

/** Progress of one file: sent while bytes arrive, and once more with `done` when the file is settled. */
export interface DownloadProgress {
  path: string;
  localPath: string;
  received: number;
  total: number | undefined;
  done?: 'downloaded' | 'skipped' | 'failed';
  /** With `done: 'failed'`: why. */
  error?: Error;
}

/** How to download. */
export interface DownloadOptions {
  /** The local data root; every destination is resolved below it from the file's name. */
  dataDir: string;
  /** Replace files that exist already (otherwise they are skipped). */
  force?: boolean | undefined;
  /** Files downloaded at once; default 8. */
  concurrency?: number | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((event: DownloadProgress) => void) | undefined;
  /** Called once the targets are checked, with the number of distinct files to transfer. */
  onStart?: ((files: number) => void) | undefined;
  /** Resumes (Range requests) allowed per file after a dropped connection; default 5. */
  maxResumes?: number | undefined;
}

/** The outcome for one file. */
export interface DownloadResult {
  path: string;
  localPath: string;
  status: 'downloaded' | 'skipped' | 'failed';
  /** Bytes written for this file in this run (0 when skipped). */
  bytes: number;
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
  options.onStart?.(files.length);
  const results: DownloadResult[] = new Array(files.length);
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_DOWNLOAD_CONCURRENCY));
  const link = linkSignal(options.signal, concurrency);
  const batch: Batch = {
    http,
    options: link ? { ...options, signal: link.signal } : options,
    folders: new FolderCache(),
    stop: new BatchStop(),
  };
  await runPool(files.length, concurrency, async (index) => {
    const result = await downloadOne(batch, files[index] as PlannedDownload);
    batch.stop.note(result.error);
    results[index] = result;
    options.onProgress?.({
      path: result.path,
      localPath: result.localPath,
      received: result.bytes,
      total: result.status === 'downloaded' ? result.bytes : undefined,
      done: result.status,
      ...(result.error ? { error: result.error } : {}),
    });
  }).finally(() => link?.dispose());
  return results;
}

interface PlannedDownload {
  file: MissionFile;
  localPath: string;
}

/** What every file of one batch shares. */
interface Batch {
  http: DownloadHttp;
  options: DownloadOptions;
  folders: FolderCache;
  stop: BatchStop;
}

/** Validates every target and resolves its destination; the first occurrence of a file wins. */
function planDownloads(targets: readonly string[], dataDir: string): PlannedDownload[] {
  const problems: string[] = [];
  const planned = new Map<string, PlannedDownload>();
  for (const target of targets) {
    let file: MissionFile;
    try {
      file = parsePathOrName(target);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const problem of error.problems) problems.push(`${target}: ${problem}`);
      continue;
    }
    if (!planned.has(file.path)) planned.set(file.path, { file, localPath: resolveLocalPath(dataDir, file) });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return [...planned.values()];
}

/**
 * Folders created in this batch: files of one product share their month folder, and a `mkdir -p` per file
 * is a measurable part of downloading many small files.
 */
class FolderCache {
  private readonly made = new Map<string, Promise<void>>();

  ensure(folder: string): Promise<void> {
    let made = this.made.get(folder);
    if (!made) {
      made = mkdir(folder, { recursive: true }).then(() => undefined);
      made.catch(() => this.made.delete(folder));
      this.made.set(folder, made);
    }
    return made;
  }

  forget(folder: string): void {
    this.made.delete(folder);
  }
}

async function downloadOne(batch: Batch, { file, localPath }: PlannedDownload): Promise<DownloadResult> {
  const result = (status: DownloadResult['status'], bytes: number, error?: Error): DownloadResult =>
    error
      ? { path: file.path, localPath, status, bytes, error }
      : { path: file.path, localPath, status, bytes };
  const { http, options } = batch;
  const signal = options.signal;
  try {
    if (signal?.aborted) throw abortedError(signal);
    if (!options.force && exists(localPath)) return result('skipped', 0);
    const stopped = batch.stop.notAttempted();
    if (stopped) return result('failed', 0, stopped);
    const url = await http.resolveDownload(file.path, signal);
    const part = await openPart(batch.folders, localPath);
    try {
      const bytes = await receiveObject({
        http,
        url,
        part,
        signal,
        maxResumes: options.maxResumes ?? DEFAULT_MAX_RESUMES,
        onBytes: (received, total) => options.onProgress?.({ path: file.path, localPath, received, total }),
      });
      // Without fsync: a crash can lose the last seconds of writes but never leaves a part under the final
      // name, and a per-file fsync costs more than the rest of a small-file download.
      await part.commit();
      return result('downloaded', bytes);
    } finally {
      await part.discard();
    }
  } catch (error) {
    return result('failed', 0, failureOf(error, signal));
  }
}

function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    throw localError(`Cannot check ${path}`, error);
  }
}

/** Makes the destination's folder (once per batch) and opens the part file beside it. */
async function openPart(folders: FolderCache, localPath: string): Promise<PartFile> {
  const folder = dirname(localPath);
  const attempt = async () => {
    try {
      await folders.ensure(folder);
    } catch (error) {
      throw localError(`Cannot create the folder ${folder}`, error);
    }
    return PartFile.open(localPath);
  };
  try {
    return await attempt().catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The folder went away since this batch made it: make it again.
      folders.forget(folder);
      return attempt();
    });
  } catch (error) {
    throw localError(`Cannot write ${localPath}.part`, error);
  }
}
