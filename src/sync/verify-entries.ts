/** What a `verify` pass reports of each file and of the whole, and the part of the HTTP client it uses. */
import type { ChecksumAlgorithm } from '../core/checksums/checksum.js';
import type { DownloadHttp, DownloadProgress } from '../download/types.js';
import type { HttpClient } from '../service/client.js';

/**
 * What a pass found of one file: `ok` (the bytes are those verified), `corrupt` (they are not), `unverifiable`
 * (no record, and the archive states no checksum to compare with), `extra` (not the archive's: not compared),
 * `unreadable` (it vanished or could not be read during the pass).
 */
export type VerifyStatus = 'ok' | 'corrupt' | 'unverifiable' | 'extra' | 'unreadable';

/** What a pass compared a file with. */
export type VerifiedAgainst = 'record' | 'archive' | 'download';

/** One file of a pass. */
export interface VerifyEntry {
  status: VerifyStatus;
  /** The storage path (the path below the data root). */
  path: string;
  localPath: string;
  /** The algorithm the file was hashed with, when it was. */
  algorithm?: ChecksumAlgorithm | undefined;
  /** What it was compared with: its line in the download record, the archive's stated checksum, or its bytes. */
  against?: VerifiedAgainst | undefined;
  /** For `corrupt`: the digest expected and the one the file has (hex for MD5, base64 for the others). */
  expected?: string | undefined;
  got?: string | undefined;
  /** Why, in words, for any status but `ok`. */
  reason?: string | undefined;
  /** For `corrupt` with `repair`: fetched again and verified, or why not. */
  repair?: { status: 'repaired' | 'failed'; error?: Error | undefined } | undefined;
}

/** Progress of a pass: files and bytes done of those in scope. */
export interface VerifyProgress {
  files: number;
  filesDone: number;
  bytes: number;
  bytesDone: number;
  /** While `repair` runs: the download's own progress. */
  repairing?: DownloadProgress | undefined;
}

/** How to verify. */
export interface VerifyOptions {
  /** The local data root. */
  dataDir: string;
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
  /**
   * Files the record does not vouch for and whose archive states no checksum without its body (an object under
   * SSE-KMS, or uploaded in parts): fetched whole and compared byte for byte, instead of `unverifiable`.
   */
  download?: boolean | undefined;
  /** Fetch each corrupt file again (past the record's trust); its old bytes are replaced only once the new verify. */
  repair?: boolean | undefined;
  /** Only files not verified since then (a nightly job verifies the part of the root whose turn it is). */
  notVerifiedSince?: Date | undefined;
  /** Hashing threads; default 2. */
  threads?: number | undefined;
  /** At most every 100 ms, and once at the end. */
  onProgress?: ((progress: VerifyProgress) => void) | undefined;
  /** Each file as soon as it is settled (before `repair`). */
  onFile?: ((entry: VerifyEntry) => void) | undefined;
}

/** What a pass found. */
export interface VerifyReport {
  /** Every file in scope but those skipped by `notVerifiedSince`, by path. */
  entries: VerifyEntry[];
  counts: Record<VerifyStatus, number>;
  /** Files of the archive held here and in scope. */
  heldFiles: number;
  /** Of them, files left out as verified since `notVerifiedSince`. */
  notDue: number;
  /** Bytes hashed. */
  bytes: number;
  /** Corrupt files fetched again and verified (with `repair`). */
  repaired: number;
}

/** The part of the HTTP client a pass uses. */
export type VerifyHttp = Pick<HttpClient, 'queryPages'> & DownloadHttp;

/** How many files a pass found in each state. */
export function countStatuses(entries: readonly VerifyEntry[]): Record<VerifyStatus, number> {
  const counts: Record<VerifyStatus, number> = {
    ok: 0,
    corrupt: 0,
    unverifiable: 0,
    extra: 0,
    unreadable: 0,
  };
  for (const entry of entries) counts[entry.status] += 1;
  return counts;
}
