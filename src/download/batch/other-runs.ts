/**
 * The other download runs working in a batch's data root (see `runs.ts` in data-root), as one file meets them:
 * the one look at the runs' folder its claim makes, and a file another run put in place, taken as verified once
 * its record line is read.
 */
import type { Stats } from 'node:fs';
import { sleep } from '../../core/failure-policy.js';
import type { DownloadRuns } from '../../data-root/index.js';
import type { OtherRuns } from '../part/part-leftovers.js';
import type { Batch } from './plan.js';

/** The other runs each batch's last look saw (by its entry among the runs), for the next claim's leftovers. */
const runsSeen = new WeakMap<DownloadRuns, readonly number[]>();

/**
 * The other runs as a file's claim asks for them (see `PartFile.claim`): those the batch's last look saw (its first
 * claim looks first), and one look once the file's part is made. A look that sees any sends the record's lines
 * held back, which another run may be waiting for; `looked` is told how many it saw.
 */
export function runsForClaim(batch: Batch, looked: (count: number) => void): OtherRuns | undefined {
  const { runs } = batch;
  if (!runs) return undefined;
  const look = () => {
    const pids = runs.others();
    runsSeen.set(runs, pids);
    looked(pids.length);
    if (pids.length > 0) batch.verified.flush();
    return pids;
  };
  return { seen: () => runsSeen.get(runs) ?? look(), look };
}

/** How long a file another run put in place is given for its record line to be written (see `landedVerified`). */
const RECORD_WAIT_MS = 1000;

/**
 * True when the file at a destination is one the record vouches for, read again when needed. A run that put the
 * file there writes its line before its rename when its claim of the file saw this run, and at its next claim
 * otherwise: while another run is live, its line is waited for a moment before the file is checked against the store.
 */
export async function landedVerified(
  batch: Batch,
  path: string,
  present: Stats | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (!present?.isFile()) return false;
  const waitUntil = Date.now() + RECORD_WAIT_MS;
  for (;;) {
    if (batch.verified.matches(path, present)) return true;
    await batch.verified.refresh();
    if (batch.verified.matches(path, present)) return true;
    if (Date.now() >= waitUntil) return false;
    if ((batch.runs?.others().length ?? 0) === 0) {
      // The other run may have written its last lines as it ended, since the read above.
      await batch.verified.refresh();
      return batch.verified.matches(path, present);
    }
    await sleep(25, signal);
  }
}
