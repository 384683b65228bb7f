import { lstat } from 'node:fs/promises';
import { type ChecksumAlgorithm, DIGEST_BYTES } from '../core/checksums/checksum.js';
import { digestOfFile } from '../core/checksums/file-digest.js';
import type { VerifiedRecord } from '../data-root/index.js';

/** What the download record says of a local file now. */
export type RecordCheck =
  | { kind: 'same' }
  /** The record does not know the file (not downloaded by this tool, or its line was lost): not compared. */
  | { kind: 'unrecorded' }
  | { kind: 'changed'; reason: string };

const ALGORITHMS = Object.keys(DIGEST_BYTES) as ChecksumAlgorithm[];

/** Compares the file at `localPath` (storage path `path`) with its line in the download record. */
export async function checkAgainstRecord(
  record: VerifiedRecord,
  path: string,
  localPath: string,
  signal?: AbortSignal,
): Promise<RecordCheck> {
  const entry = record.recorded(path);
  if (!entry) return { kind: 'unrecorded' };
  if (entry.bad !== undefined) return { kind: 'changed', reason: 'verify found its bytes damaged' };
  const stats = await lstat(localPath);
  if (stats.size === entry.size && stats.mtimeMs === entry.mtimeMs && stats.ino === entry.ino) {
    return { kind: 'same' };
  }
  if (stats.size !== entry.size) {
    return { kind: 'changed', reason: `${stats.size} bytes, ${entry.size} when downloaded` };
  }
  const [algorithm, hex] = entry.sum.split(':') as [string, string | undefined];
  if (!ALGORITHMS.includes(algorithm as ChecksumAlgorithm) || !hex) return { kind: 'unrecorded' };
  const digest = await digestOfFile(localPath, algorithm as ChecksumAlgorithm, signal);
  return digest.toString('hex') === hex
    ? { kind: 'same' }
    : { kind: 'changed', reason: `its ${algorithm} differs from the one verified when downloaded` };
}
