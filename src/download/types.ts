/** What the download engine takes and gives: its options, progress events and results. */
import type { HttpClient } from '../service/client.js';

/** Progress of one file: sent while bytes arrive, and once more with `done` when the file is settled. */
export interface DownloadProgress {
  path: string;
  localPath: string;
  received: number;
  /** The file's size, when known (with `done`, more than `received` after a resume). */
  total: number | undefined;
  done?: DownloadResult['status'];
  /** With `done`: whether the bytes were checked against the store's checksum. */
  verified?: boolean;
  /** With `done: 'failed'`: why. */
  error?: Error;
  /** Sent once when another process is downloading the same file: its process id (this one waits for it). */
  waitingFor?: number;
}

/**
 * How to download. The transfer options (`concurrency`, `connections`, `partSizeBytes`, `requireChecksum`) given
 * win over the client's transfer settings (`createClient`, the environment, the configuration file).
 */
export interface DownloadOptions {
  /** The local data root; every destination is resolved below it from the file's name. */
  dataDir: string;
  /** Download files again even when a verified copy is in place (otherwise it is skipped). */
  force?: boolean | undefined;
  /** Files downloaded at once; default 8. */
  concurrency?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of each file: at most every 100 ms per file (and per pass of an upload), its end, and `done`. */
  onProgress?: ((event: DownloadProgress) => void) | undefined;
  /** Called once the targets are checked, with the number of distinct files to transfer. */
  onStart?: ((files: number) => void) | undefined;
  /**
   * Connections one large file is fetched over at once, in parts (1: one stream). By default (`'auto'`) the
   * number is measured: 8 first (or what the last download from the host settled on), then more while each step
   * raises the throughput, up to 32.
   */
  connections?: number | 'auto' | undefined;
  /** Bytes per part of a large file; default 16 MiB. Files of at least two parts are split. */
  partSizeBytes?: number | undefined;
  /**
   * @deprecated The former name of `partSizeBytes` (bytes too), taken while callers move to that name; where both
   * are given, `partSizeBytes` wins.
   */
  partSize?: number | undefined;
  /**
   * Fail a file (`E_UNVERIFIED`) whose store states no checksum to check it against (an encrypted or multipart
   * object without `x-amz-checksum-*`); by default it is downloaded and its result says `verified: false`.
   */
  requireChecksum?: boolean | undefined;
}

/**
 * The outcome for one file: `downloaded` (it was not there), `replaced` (a file that was there did not hold the
 * stored bytes, or `force` asked for it), `skipped` (a verified copy is in place) or `failed`.
 */
export interface DownloadResult {
  path: string;
  localPath: string;
  status: 'downloaded' | 'replaced' | 'skipped' | 'failed';
  /**
   * Bytes of the file received over the network in this run (0 when skipped; less than its size after a resume).
   * For a failed file: the bytes it had on disk when it failed, kept in its part file for the next run to resume
   * (0 when none were kept: the part was removed, as after a full disk or damaged bytes).
   */
  bytes: number;
  /** The file's size, for a file downloaded or replaced: more than `bytes` when the run resumed a part. */
  size?: number;
  /** True when the file's bytes were checked against the store's checksum (always, for a skipped file). */
  verified: boolean;
  /** The checksum the bytes were checked with (`crc32`, `md5`, `sha1`, `sha256`), when verified and known. */
  checksum?: string;
  error?: Error;
}

/** The part of the HTTP client the download engine uses. */
export type DownloadHttp = Pick<HttpClient, 'resolveDownload' | 'getObject'>;
