/** What `download` prints on stdout: the local path of each file in place, or a JSON record per file. */

import type { DownloadResult } from '../../api.js';
import { isMissionDataError, NOT_ATTEMPTED } from '../../core/errors.js';

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

/** The results as stdout shows them: paths of the files in place (fetched or verified), or every file as JSON. */
export function formatDownloadResults(
  results: readonly DownloadResult[],
  format: DownloadOutputFormat,
): string {
  if (format === 'json') return `${JSON.stringify(results.map(downloadRecord), null, 2)}\n`;
  const inPlace = results.filter((result) => result.status !== 'failed');
  return inPlace.map((result) => `${result.localPath}\n`).join('');
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
