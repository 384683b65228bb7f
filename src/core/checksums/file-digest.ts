/** The digest of a whole local file, as the checks of a copy already on disk need it. */
import { createReadStream } from 'node:fs';
import { abortedError } from '../batch.js';
import { AbortedError } from '../errors.js';
import { type ChecksumAlgorithm, RunningChecksum } from './checksum.js';

/**
 * Reads `path` through in 1 MiB chunks and returns its digest in `algorithm`. A read cut short by `signal` ends
 * with the batch's `AbortedError`; any other read error is handed to `onReadError` for the caller's wording.
 */
export async function digestOfFile(
  path: string,
  algorithm: ChecksumAlgorithm,
  signal: AbortSignal | undefined,
  onReadError: (error: unknown) => Error = (error) =>
    error instanceof Error ? error : new Error(String(error)),
): Promise<Buffer> {
  const checksum = new RunningChecksum(algorithm);
  try {
    for await (const chunk of createReadStream(path, {
      highWaterMark: 1024 * 1024,
      signal,
    }) as AsyncIterable<Buffer>) {
      checksum.update(chunk);
    }
  } catch (error) {
    if (signal?.aborted) throw abortedError(signal);
    if (error instanceof AbortedError) throw error;
    throw onReadError(error);
  }
  return await checksum.digest();
}
