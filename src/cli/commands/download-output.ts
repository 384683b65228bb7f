/** What `download` prints on stdout: the local path of each file in place, or a JSON record per file. */

import type { DownloadResult } from '../../api.js';
import { isMissionDataError, NOT_ATTEMPTED } from '../../core/errors.js';
import { jsonArrayPieces, linePieces } from '../results-out.js';

/** Forms of `download`'s stdout. */
export const DOWNLOAD_OUTPUT_FORMATS = ['paths', 'json'] as const;
export type DownloadOutputFormat = (typeof DOWNLOAD_OUTPUT_FORMATS)[number];

/** A file's record in `--output-format json`; `file_path` lets the array be piped into `download -` again. */
export interface DownloadRecord {
  file_path: string;
  local_path: string;
  status: DownloadResult['status'] | 'not-started';
  bytes: number;
  verified: boolean;
  checksum: string | null;
  error?: string;
}

/**
 * The results as stdout shows them, a piece at a time (see `cli/results-out.ts`): paths of the files in place
 * (fetched or verified), or every file as JSON.
 */
export function downloadResultPieces(
  results: readonly DownloadResult[],
  format: DownloadOutputFormat,
): Iterable<string> {
  if (format === 'json') return jsonArrayPieces(results, downloadRecord);
  const inPlace = results.filter((result) => result.status !== 'failed');
  return linePieces(inPlace, (result) => `${result.localPath}\n`);
}

function downloadRecord(result: DownloadResult): DownloadRecord {
  const notStarted = isMissionDataError(result.error) && result.error.code === NOT_ATTEMPTED;
  const record: DownloadRecord = {
    file_path: result.path,
    local_path: result.localPath,
    status: notStarted ? 'not-started' : result.status,
    bytes: result.bytes,
    verified: result.verified,
    checksum: result.checksum ?? null,
  };
  if (result.error) record.error = result.error.message;
  return record;
}
