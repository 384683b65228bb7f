/**
 * The download engine: fetches stored files into the local data root. Each file streams to a part file of
 * this process, is checked against the store's checksum as it arrives, and becomes the destination only once
 * every byte has arrived and matched (see `part-file.ts` and `receive.ts`). A file verified before and
 * unchanged since is skipped without a request; any other file at a destination is checked against the store.
 */

import { lstat } from 'node:fs/promises';
import { BatchStop, linkSignal, runPool } from '../core/batch.js';
import {
  type TransferSettings,
  transferFor,
  type WithRequests,
  type WithTransfer,
} from '../core/call-settings.js';
import { DataRoot } from '../data-root/index.js';
import { downloadOne } from './batch/file-download.js';
import { type Batch, FolderCache, Lookups, type PlannedDownload, planDownloads } from './batch/plan.js';
import { DEFAULT_CONNECTIONS, DEFAULT_MAX_CONNECTIONS } from './ranged/adaptive.js';
import type { DownloadHttp, DownloadOptions, DownloadProgress, DownloadResult } from './types.js';

/** What the download engine is handed: the call's options, the client's request and transfer settings. */
export type DownloadRequest = DownloadOptions & WithRequests & WithTransfer;

/**
 * Downloads files into the data root. `targets` are storage paths or bare names, validated with the naming
 * rules before any request (a `ValidationError` lists every bad one); the same file given twice is fetched
 * once. Never throws for a single file's failure: each result carries its status and error.
 */
export async function downloadFiles(
  http: DownloadHttp,
  targets: readonly string[],
  options: DownloadRequest,
): Promise<DownloadResult[]> {
  const files = planDownloads(targets, options.dataDir);
  // Before anything is asked of the service: a data root that cannot take files is one error, not one per file.
  let root: DataRoot;
  try {
    root = await DataRoot.open(options.dataDir, { writable: true });
  } catch (unwritable) {
    return await heldInPlace(files, options, unwritable);
  }
  options.onStart?.(files.length);
  const results: DownloadResult[] = new Array(files.length);
  const transfer = transferOf(options);
  const { concurrency } = transfer;
  const link = linkSignal(options.signal, concurrency);
  try {
    const batch = await openBatch(http, root, options, transfer, link?.signal, files);
    const lookups = new Lookups(batch, files, concurrency);
    await runPool(files.length, concurrency, async (index) => {
      const result = await downloadOne(batch, files[index] as PlannedDownload, lookups.take(index));
      batch.stop.note(result.error);
      results[index] = result;
      if (options.onProgress) options.onProgress(doneEvent(result));
    });
  } finally {
    link?.dispose();
    await root.close();
  }
  return results;
}

/** The last progress event of a file: its result. */
function doneEvent(result: DownloadResult): DownloadProgress {
  const event: DownloadProgress = {
    path: result.path,
    localPath: result.localPath,
    received: result.bytes,
    total: result.status === 'failed' ? undefined : (result.size ?? result.bytes),
    done: result.status,
    verified: result.verified,
  };
  if (result.error) event.error = result.error;
  return event;
}

/**
 * A data root that cannot take files: nothing to write when every file is a verified copy in place (a read-only
 * mirror still lists its files), each then skipped; else `unwritable` is thrown.
 */
async function heldInPlace(
  files: readonly PlannedDownload[],
  options: DownloadOptions,
  unwritable: unknown,
): Promise<DownloadResult[]> {
  if (options.force) throw unwritable;
  const root = await DataRoot.open(options.dataDir);
  const held = await root.allVerified(files).finally(() => root.close());
  if (!held) throw unwritable;
  options.onStart?.(files.length);
  for (const done of held) {
    options.onProgress?.({
      path: done.path,
      localPath: done.localPath,
      received: 0,
      total: undefined,
      done: 'skipped',
      verified: true,
    });
  }
  return held;
}

/**
 * The transfer settings of a batch: those handed down, each the call gave in its place (a library caller of the
 * engine gives them as options, and the part size under its former name too).
 */
function transferOf(options: DownloadRequest): TransferSettings {
  return transferFor(options.transfer, {
    ...options,
    partSizeBytes: options.partSizeBytes ?? options.partSize,
  });
}

/**
 * What the files of one batch share, all of it asked of the data root `root` (closed at the batch's end): the
 * record, this run's entry among the runs of the data root, the connections learned.
 */
async function openBatch(
  http: DownloadHttp,
  root: DataRoot,
  options: DownloadRequest,
  transfer: TransferSettings,
  linked: AbortSignal | undefined,
  files: readonly PlannedDownload[],
): Promise<Batch> {
  return {
    http,
    options: { force: options.force, signal: linked ?? options.signal, onProgress: options.onProgress },
    transfer,
    requests: options.requests,
    folders: new FolderCache(options.dataDir),
    stop: new BatchStop(),
    root,
    verified: await root.verified(files.map(({ file }) => file.path)),
    // Connections are measured unless fixed (the table's default): on a link that caps each connection more of
    // them pay (40 MiB/s each: 1.9 s for 1 GiB against 3.6 s on 8, and aria2c -x 16's 2.6 s), and on loopback it
    // costs what 8 do.
    learned: transfer.connections === 'auto' ? root.learnedConnections(LIMITS) : undefined,
    // Before the first part is claimed: another run that starts now or later sees this one at its files' turns.
    runs: root.joinRuns(),
  };
}

/** What a download would do with one file: fetch it, skip it (a verified copy is in place) or check it first. */
export interface DownloadPreview {
  path: string;
  localPath: string;
  /**
   * `check`: a file is at the destination but not recorded as verified; it is compared with the store.
   * `refuse`: the download would be refused before any request (`error` says why: a name that differs from an
   * earlier one of the batch only in case, on a file system that does not tell case apart).
   */
  action: 'fetch' | 'skip' | 'check' | 'refuse';
  /** Size of the file at the destination, when there is one. */
  localSize?: number;
  /** Why the download would be refused (action `refuse`). */
  error?: string;
}

/** What `downloadFiles` would do with each target (a dry run): names are checked, nothing is requested. */
export async function previewDownloads(
  targets: readonly string[],
  options: Pick<DownloadOptions, 'dataDir' | 'force'>,
): Promise<DownloadPreview[]> {
  const files = planDownloads(targets, options.dataDir);
  const root = await DataRoot.open(options.dataDir);
  try {
    const verified = await root.verified(files.map(({ file }) => file.path));
    return await Promise.all(
      files.map(async ({ file, localPath, refused }): Promise<DownloadPreview> => {
        if (refused) return { path: file.path, localPath, action: 'refuse', error: refused.message };
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
    await root.close();
  }
}

/** What a measured download may start from, as the data root's record of learned numbers is told. */
const LIMITS = { start: DEFAULT_CONNECTIONS, max: DEFAULT_MAX_CONNECTIONS };
