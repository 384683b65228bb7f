/**
 * The download engine: fetches stored files into the local data root, streaming each one to `<dest>.part`
 * and renaming it over the destination only once every byte has arrived.
 *
 * Writes (~1 MiB each), existence checks and closing are synchronous, as in curl and aria2: handing them to
 * the thread pool costs more than they do when writes land in the page cache, and on a machine of two cores
 * that thread competes with the one receiving. Opening, renaming and creating folders stay asynchronous: they
 * wait on the file system's journal, at times for milliseconds, and meanwhile the other transfers go on.
 */

import { setMaxListeners } from 'node:events';
import { closeSync, ftruncateSync, open as openCallback, statSync, writevSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { displayUrl, type HttpClient, type ObjectResponse } from './client.js';
import {
  AbortedError,
  isMissionDataError,
  LocalFileError,
  NetworkError,
  NOT_ATTEMPTED,
  ProtocolError,
  ValidationError,
} from './errors.js';
import { resolveLocalPath } from './layout.js';
import { type MissionFile, parsePathOrName } from './naming.js';

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
  force?: boolean;
  /** Files downloaded at once; default 8. */
  concurrency?: number;
  signal?: AbortSignal;
  onProgress?: (event: DownloadProgress) => void;
  /** Called once the targets are checked, with the number of distinct files to transfer. */
  onStart?: (files: number) => void;
  /** Resumes (Range requests) allowed per file after a dropped connection; default 5. */
  maxResumes?: number;
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

const MIB = 1024 * 1024;
/** Received chunks are written in batches of this size (see `pump`). */
const WRITE_BATCH_BYTES = MIB;
/** Keeps a batch of tiny chunks below the platform's iovec limit. */
const WRITE_BATCH_CHUNKS = 512;
const DEFAULT_MAX_RESUMES = 5;
/** Progress is reported at most once per this many bytes received. */
const PROGRESS_STEP_BYTES = 64 * 1024;

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
  const perFile: DownloadOptions = link ? { ...options, signal: link.signal } : options;
  const folders = new FolderCache();
  // Once the service cannot be reached at all, asking it again for each remaining file would only repeat the
  // same failure: those files are not attempted.
  let unreachable: Error | undefined;
  await runPool(files.length, concurrency, async (index) => {
    const planned = files[index] as PlannedDownload;
    const result = await downloadOne(http, planned, perFile, folders, () => unreachable);
    if (result.error && unreachableErrors.has(result.error)) unreachable ??= result.error;
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
 * A signal that follows `signal`, for the transfers of one batch: each running transfer listens to it a few
 * times (the HTTP client, the body), so its listener limit grows with the concurrency instead of warning.
 */
export function linkSignal(
  signal: AbortSignal | undefined,
  concurrency: number,
): { signal: AbortSignal; dispose: () => void } | undefined {
  if (!signal) return undefined;
  const controller = new AbortController();
  setMaxListeners(Math.max(10, concurrency * 4 + 10), controller.signal);
  const follow = () => controller.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, dispose: () => signal.removeEventListener('abort', follow) };
}

/** Runs `work(0..count-1)` with at most `concurrency` running at once. `work` must not throw. */
export async function runPool(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
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

/** Codes of the errors that say the service itself cannot be reached, whichever file is asked for. */
const UNREACHABLE_CODES = new Set(['E_CONNECTION_REFUSED', 'E_HOST_NOT_FOUND', 'E_CERTIFICATE', 'E_TLS']);
/** Errors of asking the service for a file's address that say it cannot be reached. */
const unreachableErrors = new WeakSet<Error>();

/** Why a file is left alone: the service could not be reached for an earlier one. */
function notAttempted(cause: Error): NetworkError {
  return new NetworkError('not attempted: the service could not be reached', {
    code: NOT_ATTEMPTED,
    cause,
    ...(isMissionDataError(cause) && cause.hint ? { hint: cause.hint } : {}),
  });
}

async function downloadOne(
  http: DownloadHttp,
  { file, localPath }: PlannedDownload,
  options: DownloadOptions,
  folders: FolderCache,
  unreachable: () => Error | undefined,
): Promise<DownloadResult> {
  const result = (status: DownloadResult['status'], bytes: number, error?: Error): DownloadResult =>
    error
      ? { path: file.path, localPath, status, bytes, error }
      : { path: file.path, localPath, status, bytes };
  const signal = options.signal;
  try {
    if (signal?.aborted) throw abortedError(signal);
    if (!options.force && exists(localPath)) return result('skipped', 0);
    const stop = unreachable();
    if (stop) return result('failed', 0, notAttempted(stop));
    const url = await http.resolveDownload(file.path, signal).catch((error: unknown) => {
      if (isMissionDataError(error) && UNREACHABLE_CODES.has(error.code)) unreachableErrors.add(error);
      throw error;
    });
    const bytes = await fetchToFile(http, url, file, localPath, options, folders);
    return result('downloaded', bytes);
  } catch (error) {
    const reason = signal?.aborted && !(error instanceof AbortedError) ? abortedError(signal) : error;
    return result('failed', 0, reason instanceof Error ? reason : new Error(String(reason)));
  }
}

function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    throw localError(`Cannot check ${path}`, error);
  }
}

/**
 * Streams the object to `<dest>.part`, resuming with Range after a dropped connection, then renames it over
 * the destination. Without fsync: a crash can lose the last seconds of writes but never leaves a `.part`
 * under the final name, and per-file fsync costs more than the rest of a small-file download.
 */
async function fetchToFile(
  http: DownloadHttp,
  url: string,
  file: MissionFile,
  localPath: string,
  options: DownloadOptions,
  folders: FolderCache,
): Promise<number> {
  const partPath = `${localPath}.part`;
  const folder = dirname(localPath);
  const openPart = async () => {
    try {
      await folders.ensure(folder);
    } catch (error) {
      throw localError(`Cannot create the folder ${folder}`, error);
    }
    return openFile(partPath);
  };
  let fd: number;
  try {
    fd = await openPart().catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The folder went away since this batch made it: make it again.
      folders.forget(folder);
      return openPart();
    });
  } catch (error) {
    throw localError(`Cannot write ${partPath}`, error);
  }
  let closed = false;
  let renamed = false;
  try {
    const bytes = await receive(http, url, fd, partPath, file, localPath, options);
    closed = true;
    closeSync(fd);
    try {
      await rename(partPath, localPath);
    } catch (error) {
      throw localError(`Cannot move ${partPath} to ${localPath}`, error);
    }
    renamed = true;
    return bytes;
  } finally {
    if (!closed) {
      try {
        closeSync(fd);
      } catch {
        // The error being reported is the one that matters.
      }
    }
    if (!renamed) await rm(partPath, { force: true }).catch(() => undefined);
  }
}

/** Opens (creating or emptying) a file for writing, in the thread pool; resolves to its descriptor. */
function openFile(path: string): Promise<number> {
  return new Promise((resolve, reject) =>
    openCallback(path, 'w', (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

interface ObjectState {
  /** Bytes of the object safely written to the part file. */
  written: number;
  /** The object's size, once an answer told it. */
  total: number | undefined;
  /** The object's ETag, once an answer told it; a different one later means the object changed. */
  etag: string | undefined;
}

async function receive(
  http: DownloadHttp,
  url: string,
  fd: number,
  partPath: string,
  file: MissionFile,
  localPath: string,
  options: DownloadOptions,
): Promise<number> {
  const signal = options.signal;
  const maxResumes = options.maxResumes ?? DEFAULT_MAX_RESUMES;
  const state: ObjectState = { written: 0, total: undefined, etag: undefined };
  // The query string of a pre-signed URL is a credential: messages never show it.
  const shown = displayUrl(new URL(url));
  const report = (received: number) =>
    options.onProgress?.({ path: file.path, localPath, received, total: state.total });
  let resumes = 0;
  let lastError: unknown;
  for (;;) {
    if (signal?.aborted) throw abortedError(signal);
    const start = state.written;
    const response = await http.getObject(url, start > 0 ? { start, signal } : signal ? { signal } : {});
    let restart: boolean;
    try {
      restart = acceptResponse(response, state, shown);
    } catch (error) {
      response.body.destroy();
      throw error;
    }
    if (restart && state.written > 0) {
      // The server sent the whole object (200) or a different version of it: start again from zero.
      state.written = 0;
      try {
        ftruncateSync(fd, 0);
      } catch (error) {
        response.body.destroy();
        throw localError(`Cannot write ${partPath}`, error);
      }
    }
    const outcome = await pump(response.body, fd, partPath, state, signal, report);
    state.written = outcome.position;
    if (signal?.aborted) throw abortedError(signal);
    if (state.total !== undefined && state.written === state.total) return state.written;
    if (outcome.error === undefined && state.total === undefined) return state.written;
    // A dropped connection or a short body: resume from the bytes on disk.
    lastError = outcome.error;
    if (resumes >= maxResumes) {
      const got = `${state.written} of ${state.total ?? 'an unknown number of'} bytes`;
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new NetworkError(
        `GET ${shown}: the connection kept ending early; received ${got} after ${resumes} resumes${why}.`,
        { code: 'E_INCOMPLETE', cause: lastError, hint: 'Run the download again.' },
      );
    }
    resumes += 1;
  }
}

/**
 * Checks an object answer against what is on disk and learns the object's size. Returns true when the body
 * starts at byte 0 although bytes were written already (a 200 to a Range request, or a changed object).
 */
function acceptResponse(response: ObjectResponse, state: ObjectState, url: string): boolean {
  const etag = header(response, 'etag');
  const length = numericHeader(response, 'content-length', url);
  const changed = state.etag !== undefined && etag !== undefined && etag !== state.etag;
  if (etag !== undefined) state.etag = etag;
  if (response.status === 200) {
    if (length !== undefined) state.total = length;
    else if (changed) state.total = undefined;
    return true;
  }
  if (response.status !== 206) {
    throw new ProtocolError(`GET ${url}: unexpected status ${response.status} for a file download.`);
  }
  const range = header(response, 'content-range');
  const match = range === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range.trim());
  if (!match) {
    throw new ProtocolError(
      `GET ${url}: a 206 answer without a readable Content-Range (${range ?? 'none'}).`,
    );
  }
  const first = Number(match[1]);
  const last = Number(match[2]);
  const size = match[3] === '*' ? undefined : Number(match[3]);
  if (first !== state.written || last < first || (size !== undefined && last >= size)) {
    throw new ProtocolError(
      `GET ${url}: asked for bytes from ${state.written} but the answer holds ${range}; refusing to splice it.`,
    );
  }
  if (length !== undefined && length !== last - first + 1) {
    throw new ProtocolError(`GET ${url}: Content-Length ${length} does not match Content-Range ${range}.`);
  }
  if (changed || (size !== undefined && state.total !== undefined && size !== state.total)) {
    throw new ProtocolError(`GET ${url}: the file changed on the server while it was being downloaded.`, {
      hint: 'Run the download again.',
    });
  }
  // A partial answer that does not reach the end would leave a hole: treat its end as the object's end only
  // when the server gave no size.
  state.total = size ?? last + 1;
  return false;
}

interface PumpOutcome {
  /** Bytes of the object on disk after this body. */
  position: number;
  /** Why the body ended early, when it did. */
  error?: unknown;
}

/**
 * Copies a body to the part file from `state.written`. Chunks are taken as they arrive ('data' events: the
 * async iterator would join buffered chunks into new buffers, a copy of every byte) and written in batches of
 * ~1 MiB, one `writev` each instead of a system call per 64 KiB network chunk. Errors of
 * the body are returned (the caller may resume); errors writing the file and bodies longer than announced are
 * thrown.
 */
function pump(
  body: Readable,
  fd: number,
  partPath: string,
  state: ObjectState,
  signal: AbortSignal | undefined,
  report: (received: number) => void,
): Promise<PumpOutcome> {
  return new Promise((resolve, reject) => {
    let position = state.written;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let reported = state.written;
    let settled = false;

    const flush = () => {
      if (pendingBytes === 0) return;
      writeAll(fd, pending, pendingBytes, position, partPath);
      position += pendingBytes;
      pending = [];
      pendingBytes = 0;
    };
    const onAbort = () => body.destroy(abortedError(signal as AbortSignal));
    const cleanUp = () => {
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      body.off('data', onData);
    };
    const fail = (error: Error) => {
      if (settled) return;
      cleanUp();
      body.destroy();
      reject(error);
    };
    // Bytes that arrived before a drop are good: they are written so the resume starts after them.
    const finish = (readError?: unknown) => {
      if (settled) return;
      try {
        flush();
      } catch (error) {
        fail(error as Error);
        return;
      }
      cleanUp();
      if (position !== reported) report(position);
      resolve(readError === undefined ? { position } : { position, error: readError });
    };
    function onData(chunk: Buffer) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (state.total !== undefined && position + pendingBytes > state.total) {
        fail(new ProtocolError(`The server sent more than the announced ${state.total} bytes.`));
        return;
      }
      const received = position + pendingBytes;
      if (received - reported >= PROGRESS_STEP_BYTES) {
        reported = received;
        report(received);
      }
      if (pendingBytes >= WRITE_BATCH_BYTES || pending.length >= WRITE_BATCH_CHUNKS) {
        try {
          flush();
        } catch (error) {
          fail(error as Error);
        }
      }
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    body.on('data', onData);
    body.once('end', () => finish());
    body.once('error', (error) => finish(error));
    body.once('close', () => {
      if (!body.readableEnded)
        finish(body.errored ?? new Error('the connection closed before the body ended'));
    });
  });
}

function writeAll(fd: number, buffers: Buffer[], size: number, position: number, partPath: string): void {
  try {
    let done = writevSync(fd, buffers, position);
    if (done < size) {
      // Short writes are rare on regular files; finish the rest from one joined buffer.
      const rest = Buffer.concat(buffers).subarray(done);
      while (done < size) {
        const written = writevSync(fd, [rest.subarray(done - (size - rest.length))], position + done);
        if (written === 0) throw new Error('the disk accepted no more bytes');
        done += written;
      }
    }
  } catch (error) {
    throw localError(`Cannot write ${partPath}`, error);
  }
}

function header(response: ObjectResponse, name: string): string | undefined {
  const value =
    response.headers[name] ??
    Object.entries(response.headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function numericHeader(response: ObjectResponse, name: string, url: string): number | undefined {
  const value = header(response, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()))
    throw new ProtocolError(`GET ${url}: unreadable ${name} ${JSON.stringify(value)}.`);
  return Number(value);
}

/** The error a cancelled transfer fails with, worded from the signal's reason. */
export function abortedError(signal: AbortSignal): AbortedError {
  const reason: unknown = signal.reason;
  if (reason instanceof AbortedError) return reason;
  return new AbortedError(
    reason instanceof Error && reason.name !== 'AbortError' ? `Cancelled: ${reason.message}.` : 'Cancelled.',
  );
}

function localError(what: string, error: unknown): LocalFileError {
  if (error instanceof LocalFileError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LocalFileError(`${what}: ${message}`, { cause: error });
}
