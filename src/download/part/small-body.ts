/**
 * A small whole body into an empty part, without the pump (`pump.ts`): what `receive.ts` does with a 200 of at
 * most 256 KiB, where the pump's per-chunk bookkeeping and slow-disk backpressure cost more than its bytes.
 */
import { listenForAbort } from '../../core/abort-hub.js';
import { abortedError } from '../../core/batch.js';
import type { PartChecksum } from '../../core/checksums/checksum.js';
import { type AnswerBody, discardBody } from '../../http/body.js';
import type { PartFile } from './part-file.js';
import { giveStaging, longerThanAnnounced, takeStaging } from './pump.js';

/**
 * A small body into an empty part: one that comes in one read (most do) is written from where it landed, in the
 * read's callback; one in several reads is gathered in a staging buffer and written in one write after its last
 * byte (a write made then needs none of the pump's backpressure for a slow disk). Resolves to the bytes on disk
 * and, when the body ended early, why; throws when a write failed or the body ran past `total`.
 */
export async function takeSmallBody(
  body: AnswerBody,
  part: PartFile,
  checksum: PartChecksum,
  total: number,
  signal: AbortSignal | undefined,
): Promise<{ taken: number; ended: unknown }> {
  if (signal?.aborted) {
    discardBody(body);
    throw abortedError(signal);
  }
  let taken = 0;
  let staging: Buffer | undefined;
  /** Why the body was stopped here: a write that failed, or more bytes than announced. */
  let refused: Error | undefined;
  const take = (chunk: Buffer): void => {
    if (refused) return;
    if (taken + chunk.length > total) {
      refused = longerThanAnnounced(total);
      body.destroy(refused);
      return;
    }
    if (taken === 0 && chunk.length === total) {
      checksum.update(chunk);
      try {
        part.write([chunk], total, 0);
      } catch (error) {
        refused = error as Error;
      }
      taken = total;
      return;
    }
    staging ??= takeStaging();
    chunk.copy(staging, taken);
    taken += chunk.length;
  };
  const unlisten = signal ? listenForAbort(signal, () => body.destroy(abortedError(signal))) : undefined;
  let ended: unknown;
  try {
    ended = await body.consume(take);
  } finally {
    unlisten?.();
  }
  if (staging) {
    try {
      const bytes = staging.subarray(0, taken);
      checksum.update(bytes);
      if (!refused) part.write([bytes], taken, 0);
    } finally {
      giveStaging(staging);
    }
  }
  if (refused) throw refused;
  checksum.flushed(taken);
  return { taken, ended };
}
