/**
 * One file of a batch, from its lookup to its result (`downloadFiles` in `../engine.ts` runs the batch): skipped
 * when the record vouches for the copy in place, else its part claimed, the object received into it, checked and
 * put in place.
 */
import { lstatSync, type Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortedError, failureOf, notStartedError } from '../../core/batch.js';
import { isMissionDataError } from '../../core/errors.js';
import { REFETCHES_AFTER_MISMATCH, sleep } from '../../core/failure-policy.js';
import { progressPace } from '../../core/pace.js';
import { hostOf } from '../../core/urls.js';
import { type LearnedConnections, sumOf } from '../../data-root/index.js';
import { ChecksumMismatch } from '../object/object-checksum.js';
import { renewingSource } from '../object/object-url.js';
import { receiveObject } from '../object/receive.js';
import { initialState, type ObjectSource, stateRecord } from '../part/object-state.js';
import { PartBusy, PartFile } from '../part/part-file.js';
import { DEFAULT_CONNECTIONS, DEFAULT_MAX_CONNECTIONS } from '../ranged/adaptive.js';
import type { DownloadProgress, DownloadResult } from '../types.js';
import { sameAsStored } from './existing-file.js';
import type { CheckedFolder } from './folders.js';
import { landedVerified, runsForClaim } from './other-runs.js';
import type { Batch, Lookup, PlannedDownload } from './plan.js';

/** Files at least this large are recorded as verified at once: another process may be waiting for them. */
const IMMEDIATE_RECORD_BYTES = 1024 * 1024;

/** How long to wait between looks at a part another process is writing. */
const BUSY_POLL_MS = 250;

/** What is on disk and known of an object being received (the types the steps below pass along). */
type OnDisk = ReturnType<typeof initialState>;
type ObjectReceived = Awaited<ReturnType<typeof receiveObject>>;

export function downloadOne(
  batch: Batch,
  planned: PlannedDownload,
  lookup: Promise<Lookup>,
): Promise<DownloadResult> {
  return new FileDownload(batch, planned).run(lookup);
}

/**
 * One file of a batch, from its lookup to its result: skipped when a verified copy is in place, else its part
 * claimed (or another process's download of it waited for) and the object received into it and put in place.
 */
class FileDownload {
  private readonly path: string;
  private readonly localPath: string;
  private readonly options: Batch['options'];
  private readonly signal: AbortSignal | undefined;
  /** Bytes of this file kept in its part for the next run when it fails (none when the part was removed). */
  private kept = 0;
  private began = false;
  /** What is on disk and known of the object, once a part is claimed. */
  private state: OnDisk | undefined;
  /** How many other runs the look of this file's claim saw in the data root. */
  private othersAtClaim = 0;

  constructor(
    private readonly batch: Batch,
    { file, localPath }: PlannedDownload,
  ) {
    this.path = file.path;
    this.localPath = localPath;
    this.options = batch.options;
    this.signal = batch.options.signal;
  }

  async run(lookup: Promise<Lookup>): Promise<DownloadResult> {
    const signal = this.signal;
    try {
      return await this.download(await lookup);
    } catch (error) {
      // Cancelled before a byte of it was asked for: not started, rather than one more failure.
      if (signal?.aborted && !this.began) return this.result('failed', 0, false, notStartedError(signal));
      return this.result('failed', this.kept, false, failureOf(error, signal));
    }
  }

  private result(
    status: DownloadResult['status'],
    bytes: number,
    verified: boolean | string,
    error?: Error,
  ): DownloadResult {
    // `verified` is the checksum algorithm when known (`crc32`, `md5`, ...).
    const done: DownloadResult = {
      path: this.path,
      localPath: this.localPath,
      status,
      bytes,
      verified: verified !== false,
    };
    if (typeof verified === 'string' && verified !== '') done.checksum = verified;
    if (error) done.error = error;
    return done;
  }

  /** Skipped, as the record vouches for the copy in place. */
  private skipped(): DownloadResult {
    return this.result('skipped', 0, this.batch.verified.algorithmOf(this.path) ?? true);
  }

  private async download(found: Lookup): Promise<DownloadResult> {
    const { batch, options, signal, localPath } = this;
    const { http } = batch;
    if (signal?.aborted) throw abortedError(signal);
    if (found.kind === 'skip') return this.skipped();
    if (found.kind === 'stopped' || found.kind === 'refused')
      return this.result('failed', 0, false, found.error);
    // Looked up ahead of its turn, before the batch stopped: not begun, so not started.
    const stopped = batch.stop.notAttempted();
    if (stopped) return this.result('failed', 0, false, stopped);
    const { url } = found;
    let { present } = found;
    // Another run works in this data root (see `runs.ts`): what was looked up ahead of this turn may be old. Its
    // file may have landed since (its record line is written before its rename, so a file seen here is in the
    // record once re-read), or its part may be there; what it fetched is counted, not fetched again. A run seen
    // first at this file's claim (the one look at the runs' folder a file makes) is met there the same way.
    if (batch.runs?.shared && !options.force) {
      present = lstatSync(localPath, { throwIfNoEntry: false });
      if (await landedVerified(batch, this.path, present, signal)) return this.skipped();
    }
    // An expired URL is asked for again, once, and the transfer continues from the bytes held. The renewal is
    // part of the attempt that met the expiry: one request, no retries of its own.
    const source = renewingSource(http, url, () => http.resolveDownload(this.path, signal, true));
    if (!options.force && present?.isFile()) {
      const verifiedBy = await sameAsStored(source, url, localPath, present, signal);
      if (verifiedBy) {
        batch.verified.add(this.path, present, sumOf(verifiedBy));
        return this.result('skipped', 0, verifiedBy.algorithm);
      }
    }
    return await this.claimAndFetch(source, url, present);
  }

  /** Claims the file's part and fetches into it; while another process downloads the file, waits for it. */
  private async claimAndFetch(
    source: ObjectSource,
    url: string,
    present: Stats | undefined,
  ): Promise<DownloadResult> {
    const { batch, options, signal, localPath } = this;
    const folder = batch.folders.ensure(dirname(localPath));
    let listed: ReadonlySet<string> | undefined = folder.partNames;
    for (;;) {
      const done = await this.fetchUnlessBusy(folder, listed, source, url, present);
      if (done) return done;
      // Another process is downloading this file: wait for it, then look again (its copy is verified). The wait
      // varies: two runs that stepped back from one file at once come back apart.
      listed = undefined;
      await sleep(BUSY_POLL_MS * (0.5 + Math.random()), signal);
      await batch.verified.refresh();
      const now = await lstat(localPath).catch(() => undefined);
      if (!options.force && now && batch.verified.matches(this.path, now)) return this.skipped();
    }
  }

  /** The file fetched into its part; undefined when another process holds the part (said on the first look). */
  private async fetchUnlessBusy(
    folder: CheckedFolder,
    listed: ReadonlySet<string> | undefined,
    source: ObjectSource,
    url: string,
    present: Stats | undefined,
  ): Promise<DownloadResult | undefined> {
    const { batch, options, signal, localPath } = this;
    try {
      const otherRuns = runsForClaim(batch, (seen) => {
        this.othersAtClaim = seen;
      });
      const part = await PartFile.claim(localPath, { folderNames: listed, otherRuns, folder });
      if (batch.runs?.shared && !options.force) {
        // The other run's part may have become the file between this turn's first look and the claim: its
        // part or its file is always there to see (a rename), so a look at the file after the claim is enough.
        const now = lstatSync(localPath, { throwIfNoEntry: false });
        if (now && (await landedVerified(batch, this.path, now, signal))) {
          await part.stepBack();
          return this.skipped();
        }
      }
      this.began = true;
      return await this.fetchInto(part, source, url, present);
    } catch (error) {
      if (!(error instanceof PartBusy)) throw error;
      if (listed) {
        options.onProgress?.({
          path: this.path,
          localPath,
          received: 0,
          total: undefined,
          waitingFor: error.pid,
        });
      }
      return undefined;
    }
  }

  private async fetchInto(
    part: PartFile,
    source: ObjectSource,
    url: string,
    present: Stats | undefined,
  ): Promise<DownloadResult> {
    const { options } = this;
    this.state = initialState(part);
    // At most every 100 ms for this file, and when its last byte is in.
    const pace = progressPace<DownloadProgress>(options.onProgress ?? noProgress);
    try {
      const received = await this.receiveChecked(part, source, url, pace);
      await this.putInPlace(part, received);
      return {
        ...this.result(
          present ? 'replaced' : 'downloaded',
          received.transferred,
          received.verifiedBy?.algorithm ?? false,
        ),
        size: received.size,
      };
    } catch (error) {
      await this.leavePart(part, error);
      throw error;
    } finally {
      // Nothing held back is told after the file's end.
      pace.stop();
    }
  }

  /** The object received into the part; fetched again from its first byte after a checksum mismatch. */
  private async receiveChecked(
    part: PartFile,
    source: ObjectSource,
    url: string,
    pace: ReturnType<typeof progressPace<DownloadProgress>>,
  ): Promise<ObjectReceived> {
    const { batch, signal, localPath, path } = this;
    const { transfer } = batch;
    for (let refetches = 0; ; refetches += 1) {
      try {
        return await receiveObject({
          http: source,
          url,
          requireChecksum: transfer.requireChecksum,
          part,
          state: this.state as OnDisk,
          signal,
          retryPolicy: batch.requests,
          ranged: {
            connections: transfer.connections === 'auto' ? 1 : Math.max(1, Math.floor(transfer.connections)),
            adaptive: batch.learned ? measuredFrom(batch.learned, url) : undefined,
            partSize: Math.max(64 * 1024, Math.floor(transfer.partSizeBytes)),
          },
          onBytes: (bytes, total) => {
            const final = total !== undefined && bytes >= total;
            pace.push({ path, localPath, received: bytes, total }, final);
          },
        });
      } catch (error) {
        if (!(error instanceof ChecksumMismatch) || refetches >= REFETCHES_AFTER_MISMATCH) throw error;
        // Again from the first byte (see REFETCHES_AFTER_MISMATCH).
        part.truncate();
        this.state = { written: 0, total: undefined, etag: undefined };
      }
    }
  }

  /**
   * Moves the verified part into place, and records it as verified when the store stated a checksum. Its folder
   * was held to the one checked before the part was made (see `download/batch/folders.ts`): the rename goes by the same
   * path, and through a link put there since it finds no part to move.
   */
  private async putInPlace(part: PartFile, received: ObjectReceived): Promise<void> {
    const { batch } = this;
    const { verifiedBy } = received;
    await part.commit((stats) => {
      if (!verifiedBy) return;
      // Written at once when another run may be waiting for it: a large file, or one whose claim saw another run
      // (a run that came since reads it within this run's next claim, which flushes: see `other-runs.ts`).
      const now = received.size >= IMMEDIATE_RECORD_BYTES || this.othersAtClaim > 0;
      batch.verified.add(this.path, stats, sumOf(verifiedBy), now);
    });
  }

  /** The part is left for the next run to resume after any failure but damaged bytes or a changed object. */
  private async leavePart(part: PartFile, error: unknown): Promise<void> {
    const { signal } = this;
    const state = this.state as OnDisk;
    const held = state.written + sumOfRanges(state.finished);
    if (!resumable(error, signal) || held === 0 || state.etag === undefined) {
      await part.discard();
      return;
    }
    part.keep(stateRecord(state));
    this.kept = held;
    if (error instanceof Error && !signal?.aborted) {
      error.message += ` ${held} bytes of ${state.total ?? 'the'} are kept in ${part.path}; the next run resumes from them.`;
    }
  }
}

/** The progress of a batch whose caller takes none. */
function noProgress(): void {}

/** True unless the bytes on disk cannot be trusted (a checksum mismatch, another version of the object). */
function resumable(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  if (error instanceof ChecksumMismatch) return false;
  return !(
    isMissionDataError(error) &&
    (error.code === 'E_FILE_CHANGED' || error.code === 'E_UNSAFE_PATH' || error.code === 'E_UNVERIFIED')
  );
}

function sumOfRanges(ranges: ReadonlyArray<[number, number]> | undefined): number {
  return (ranges ?? []).reduce((total, [from, to]) => total + to - from, 0);
}

/**
 * Measured connections for an object at `url`: from the number the last download from its host settled on (the
 * fixed default the first time, after a look at the first connection alone), and that host's number kept once
 * this download settles on one.
 */
function measuredFrom(learned: LearnedConnections, url: string) {
  let host: string;
  try {
    host = hostOf(url);
  } catch {
    return { max: DEFAULT_MAX_CONNECTIONS, initial: DEFAULT_CONNECTIONS };
  }
  return {
    max: DEFAULT_MAX_CONNECTIONS,
    initial: learned.startFor(host),
    look: learned.measuredAt(host) === undefined,
    onDecided: (connections: number) => learned.learn(host, connections),
  };
}
