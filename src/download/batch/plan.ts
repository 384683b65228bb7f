/**
 * What the files of one download batch share: their plan (each target checked and given its destination once),
 * the folders made safe so far (`folders.ts`), and the look-ups that run ahead of the transfers.
 */

import { lstatSync, type Stats } from 'node:fs';
import { abortedError, type BatchStop } from '../../core/batch.js';
import type { RequestSettings, TransferSettings } from '../../core/call-settings.js';
import { LocalFileError, ValidationError } from '../../core/errors.js';
import {
  type CaseProbe,
  type DataRoot,
  type DownloadRuns,
  foldsCase,
  type LearnedConnections,
  type VerifiedRecord,
} from '../../data-root/index.js';
import { type LocatedFile, locateFile, resolveLocalPath } from '../../naming/layout.js';
import type { DownloadHttp, DownloadOptions } from '../types.js';
import type { FolderCache } from './folders.js';

export { CheckedFolder, FolderCache } from './folders.js';

export interface PlannedDownload {
  file: LocatedFile;
  localPath: string;
  /** Why this file is not downloaded though its name is good (another name of the batch is the same file here). */
  refused?: Error;
}

/** What a batch keeps of its call's options: the transfer settings come whole, in `Batch.transfer`. */
export type BatchOptions = Pick<DownloadOptions, 'force' | 'signal' | 'onProgress'>;

/** What every file of one batch shares. */
export interface Batch {
  http: DownloadHttp;
  options: BatchOptions;
  /** How files are transferred: concurrency, connections, part size, whether a checksum is required. */
  transfer: TransferSettings;
  /** How often a transfer is tried again, and its backoff. */
  requests: RequestSettings;
  folders: FolderCache;
  stop: BatchStop;
  /** The data root, which the batch's end closes; the record, runs and learned numbers below are its. */
  root: DataRoot;
  verified: VerifiedRecord;
  /** This run's entry among the download runs of the data root (undefined when its state folder cannot hold one). */
  runs: DownloadRuns | undefined;
  /** With `--connections auto`: the numbers earlier runs measured, per host. */
  learned: LearnedConnections | undefined;
}

/**
 * Validates every target and resolves its destination; the first occurrence of a file wins. A storage path of a
 * naming form this version does not know is downloaded to that path below the root (see `locateFile`). Where the
 * data root's file system folds case (`probe`, asked only when two names differ only in case), the later of two
 * such names is planned refused (see `refuseCaseTwins`).
 */
export function planDownloads(
  targets: readonly string[],
  dataDir: string,
  probe: CaseProbe = foldsCase,
): PlannedDownload[] {
  const problems: string[] = [];
  const hints = new Set<string>();
  const planned = new Map<string, PlannedDownload>();
  for (const target of targets) {
    let file: LocatedFile;
    try {
      file = locateFile(target);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const problem of error.problems) problems.push(`${target}: ${problem}`);
      // The client's suggestions (did you mean mag?) ride along as the hint.
      if (error.hint) hints.add(error.hint);
      continue;
    }
    if (!planned.has(file.path)) planned.set(file.path, { file, localPath: resolveLocalPath(dataDir, file) });
  }
  if (problems.length > 0) {
    throw new ValidationError(problems, hints.size > 0 ? { hint: [...hints].join(' ') } : {});
  }
  return refuseCaseTwins([...planned.values()], dataDir, probe);
}

/**
 * Two names of one batch that differ only in case (`IMAP_2025_005_a01.spice.mk`, `imap_2025_005_A01.SPICE.mk`:
 * the archive holds both) are one file where the file system folds case: both downloads would claim one part and
 * each replace the other's file. There the first is kept and each later one refused, before any request, naming
 * both and the file; where the file system tells them apart both are planned as before.
 */
function refuseCaseTwins(files: PlannedDownload[], dataDir: string, probe: CaseProbe): PlannedDownload[] {
  const firsts = new Map<string, PlannedDownload>();
  const twins: Array<[PlannedDownload, PlannedDownload]> = [];
  for (const planned of files) {
    const key = planned.file.path.toLowerCase();
    const first = firsts.get(key);
    if (first) twins.push([first, planned]);
    else firsts.set(key, planned);
  }
  if (twins.length === 0 || !probe(dataDir)) return files;
  for (const [first, later] of twins) {
    later.refused = new LocalFileError(
      `${later.file.path} differs from ${first.file.path} only in case: the data root's file system does not ` +
        `tell case apart, so both would be the one file ${first.localPath}; kept ${first.file.name}, ` +
        `not downloaded ${later.file.name}.`,
      {
        hint: 'Download the second into a data root on a case-sensitive file system (--data-dir), such as a Linux one or an APFS volume formatted case-sensitive.',
      },
    );
  }
  return files;
}

/** What a file needs before its bytes are fetched: nothing (a verified copy), or the object's address. */
export type Lookup =
  | { kind: 'skip' }
  | { kind: 'stopped'; error: Error }
  | { kind: 'refused'; error: Error }
  | { kind: 'fetch'; url: string; present: Stats | undefined };

/** Looks a file up: a verified copy in place is skipped without a request; otherwise the service names the object. */
async function lookUp(batch: Batch, { file, localPath, refused }: PlannedDownload): Promise<Lookup> {
  const { options } = batch;
  if (options.signal?.aborted) throw abortedError(options.signal);
  // Before the file in place is looked at: it is another name's, which its own look-up checks.
  if (refused) return { kind: 'refused', error: refused };
  // A look at metadata the kernel holds: in the thread pool it would cost more in hand-overs than it takes.
  const present = lstatSync(localPath, { throwIfNoEntry: false });
  if (!options.force && present && batch.verified.matches(file.path, present)) return { kind: 'skip' };
  const stopped = batch.stop.notAttempted();
  if (stopped) return { kind: 'stopped', error: stopped };
  let url: string;
  try {
    url = await batch.http.resolveDownload(file.path, options.signal);
  } catch (error) {
    // Noted at once: the files waiting for this first answer look at the batch's stop next.
    if (error instanceof Error) batch.stop.note(error);
    throw error;
  }
  return { kind: 'fetch', url, present };
}

/**
 * Look-ups run ahead of the transfers, up to `concurrency` files beyond those started, so a file's address is
 * known by the time a connection is free for it: a batch of small files then waits one round trip per file
 * instead of two. Only once the service has answered one: a service that cannot be reached is asked no more
 * than without look-ahead.
 */
export class Lookups {
  /** Look-ups started and not yet taken (and the first, which the others wait on): a taken one is let go. */
  readonly #started = new Map<number, Promise<Lookup>>();
  /** The files whose look-up was taken, never started again by one running ahead. */
  readonly #taken: Uint8Array;
  #ahead = false;
  /** Whether the first look-up has its answer: the others then go at once. */
  #firstSettled = false;

  constructor(
    private readonly batch: Batch,
    private readonly files: readonly PlannedDownload[],
    private readonly concurrency: number,
  ) {
    this.#taken = new Uint8Array(files.length);
  }

  /** The look-up of file `index`, started now unless it ran ahead; starts the ones after it when it may. */
  take(index: number): Promise<Lookup> {
    const lookup = this.#start(index);
    this.#taken[index] = 1;
    // Its file holds it from here: a batch of thousands keeps no answer it has used.
    if (index !== 0) this.#started.delete(index);
    if (this.#ahead) this.#runAhead(index);
    else {
      lookup.then(
        (found) => {
          if (found.kind !== 'fetch') return;
          this.#ahead = true;
          this.#runAhead(index);
        },
        () => undefined,
      );
    }
    return lookup;
  }

  #runAhead(index: number): void {
    const last = Math.min(this.files.length - 1, index + this.concurrency);
    for (let next = index + 1; next <= last; next += 1) if (this.#taken[next] === 0) this.#start(next);
  }

  #start(index: number): Promise<Lookup> {
    let lookup = this.#started.get(index);
    if (!lookup) {
      const file = this.files[index] as PlannedDownload;
      // The first look-up goes alone: the others follow once it has its answer (see `FirstAnswer`).
      if (index === 0 || this.#firstSettled) lookup = lookUp(this.batch, file);
      else {
        const next = () => lookUp(this.batch, file);
        lookup = this.#start(0).then(next, next);
      }
      if (index === 0) {
        const settled = () => {
          this.#firstSettled = true;
        };
        lookup.then(settled, settled);
      }
      // Heard by the file's own transfer when it starts; a batch cancelled before then never asks.
      lookup.catch(() => undefined);
      this.#started.set(index, lookup);
    }
    return lookup;
  }
}
