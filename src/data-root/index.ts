/**
 * The local data root as everything outside this folder reaches it. A run of an engine or a command opens one
 * `DataRoot` and asks it for what it needs: the record of verified downloads, its entry among the download runs,
 * the connections `--connections auto` learned, the lock and state of a sync, the removal of its part files;
 * `close()` closes what was opened. Nothing outside this folder builds a path inside the state folder or spells a
 * part file's name (`test/unit/data-root-owner.test.ts`), and nothing outside imports its other files (a rule of
 * `.dependency-cruiser.cjs`).
 */
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { realPath } from '../core/real-path.js';
import { type ConnectionLimits, LearnedConnections } from './learned-connections.js';
import { PartFiles } from './part-names.js';
import { DownloadRuns } from './runs.js';
import { checkWritableRoot, lookAtRoot, missingRoot } from './safe-writes.js';
import { stateFolder } from './state-folder.js';
import { acquireLock, type LockAges, type SyncLock } from './sync-lock.js';
import type { LoadedState, SyncIdentity, SyncState } from './sync-state.js';
import { allVerified, VerifiedRecord, type VerifiedScope } from './verified.js';

export { type CaseProbe, foldsCase } from './case-folding.js';
export type { ConnectionLimits, LearnedConnections } from './learned-connections.js';
export { isPartName, PartFiles, type PartPaths } from './part-names.js';
export type { DownloadRuns } from './runs.js';
export {
  checkFreeSpace,
  ensureFolderInside,
  folderStaysInside,
  localError,
  NO_FOLLOW,
} from './safe-writes.js';
export type { LockAges, SyncLock } from './sync-lock.js';
export type { LoadedState, SyncIdentity, SyncState } from './sync-state.js';
export { sumOf, type VerifiedEntry, type VerifiedRecord, type VerifiedScope } from './verified.js';

/** How a data root is opened. */
export interface DataRootOptions {
  /**
   * Check first that files can be created in the root (made when missing): a read-only, full or forbidden root
   * is refused once, in words (`E_DATA_ROOT`), before anything is asked of a service.
   */
  writable?: boolean | undefined;
  /**
   * Refuse a root that is not there (for a command that only reads, such as `verify`: a mistyped root must not
   * pass as an empty one), or that is not a folder; both are the path's mistake (exit status 2).
   */
  existing?: boolean | undefined;
  /** How often the sync lock and the runs' entry are touched, and when they are stale (tests shorten them). */
  ages?: LockAges | undefined;
}

/**
 * The sync state's module, loaded by the first sync that asks for it: it brings zod, which checks a state file,
 * and no other command needs either (~4 ms of a `download`'s start-up).
 */
const syncStates = () => import('./sync-state.js');

/** What a sync's lock says of the run holding it, in the refusal another run gets. */
const SYNC_LOCK_WHAT = 'sync of this data root and filter set';

/** One data root, as one run uses it: what it opened there is closed by `close()`. */
export class DataRoot {
  readonly #ages: LockAges;
  #verified: Promise<VerifiedRecord> | undefined;
  #readOnly: Promise<VerifiedRecord> | undefined;
  #runs: { joined: DownloadRuns | undefined } | undefined;
  #learned: LearnedConnections | undefined;
  readonly #locks = new Set<SyncLock>();
  #closed: Promise<void> | undefined;

  private constructor(
    /** The root as given. */
    readonly dir: string,
    /** Its real path (the root may itself be a link); the path made absolute while the root does not exist. */
    readonly realPath: string,
    ages: LockAges,
  ) {
    this.#ages = ages;
  }

  /**
   * What is at `dir` for a command that only reads it: a folder, or nothing yet (`missing`); anything else is
   * refused as `download` refuses it (exit status 2).
   */
  static look(dir: string): Promise<'folder' | 'missing'> {
    return lookAtRoot(dir);
  }

  /** Opens the data root `dir`: nothing is made there unless `writable` is asked or something is opened. */
  static async open(dir: string, options: DataRootOptions = {}): Promise<DataRoot> {
    if (options.writable) await checkWritableRoot(dir);
    else if (options.existing && (await lookAtRoot(dir)) === 'missing') throw missingRoot(dir);
    const real = await realPath(dir).catch(() => resolve(dir));
    return new DataRoot(dir, real, options.ages ?? {});
  }

  /**
   * The record of verified downloads, opened at the first ask (its state folder made when missing). `scope`: the
   * storage paths the run asks about (every one when not given): only their lines are parsed. A later ask widens
   * the record to its own scope.
   */
  verified(scope?: VerifiedScope): Promise<VerifiedRecord> {
    this.#useable();
    if (!this.#verified) {
      this.#verified = VerifiedRecord.open(this.dir, scope);
      return this.#verified;
    }
    return widened(this.#verified, scope);
  }

  /**
   * The record of verified downloads read only: nothing is made (reports leave the root as they found it).
   * `scope` as for `verified`.
   */
  readVerified(scope?: VerifiedScope): Promise<VerifiedRecord> {
    this.#useable();
    if (!this.#readOnly) {
      this.#readOnly = VerifiedRecord.read(this.dir, scope);
      return this.#readOnly;
    }
    return widened(this.#readOnly, scope);
  }

  /**
   * The results of a batch whose files are all verified copies in place (each skipped), read without writing;
   * undefined when any is not. A root that cannot be written to (a read-only mirror) still lists what it holds.
   */
  allVerified(files: readonly { file: { path: string }; localPath: string }[]) {
    this.#useable();
    return allVerified(this.dir, files);
  }

  /**
   * This run's entry among the download runs working in the root (see `runs.ts`), put there at the first ask
   * and removed at `close()`; undefined when the state folder cannot take it.
   */
  joinRuns(): DownloadRuns | undefined {
    this.#useable();
    this.#runs ??= { joined: DownloadRuns.join(this.dir, this.#ages) };
    return this.#runs.joined;
  }

  /** The connections measured downloads settled on, read at the first ask and saved at `close()`. */
  learnedConnections(limits: ConnectionLimits): LearnedConnections {
    this.#useable();
    this.#learned ??= LearnedConnections.read(this.realPath, limits);
    return this.#learned;
  }

  /**
   * Takes the lock of the sync `identity`, or throws a `BusyError` naming the run that holds it (another process,
   * or this one). Released by the handle's `release` or at `close()`.
   */
  async lockSync(identity: SyncIdentity): Promise<SyncLock> {
    this.#useable();
    const { syncId } = await syncStates();
    const lock = await acquireLock(stateFolder(this.dir), syncId(identity), SYNC_LOCK_WHAT, this.#ages);
    const handle: SyncLock = {
      file: lock.file,
      release: async () => {
        this.#locks.delete(handle);
        await lock.release();
      },
    };
    this.#locks.add(handle);
    return handle;
  }

  /** The state of the sync `identity`; a damaged or foreign file is reported and read as none. */
  async readSyncState(identity: SyncIdentity): Promise<LoadedState> {
    this.#useable();
    const { readState } = await syncStates();
    return readState(this.dir, identity);
  }

  /** Writes the state of the sync `identity` whole (a reader sees the old state or the new one). */
  async writeSyncState(identity: SyncIdentity, state: SyncState): Promise<void> {
    this.#useable();
    const { writeState } = await syncStates();
    return writeState(this.dir, identity, state);
  }

  /**
   * Removes this process's part files (and their records) of `destinations`, as a run cut short that keeps no
   * part does; the parts of other processes stay. Best effort: a part that cannot be removed is left.
   */
  async removeOwnParts(destinations: Iterable<string>): Promise<void> {
    const removals: Promise<void>[] = [];
    for (const destination of destinations) {
      const { part, record } = new PartFiles(destination).ours;
      removals.push(rm(part, { force: true }), rm(record, { force: true }));
    }
    await Promise.allSettled(removals);
  }

  /**
   * Closes what was opened: the verified records (their pending lines written, the log compacted when due),
   * this run's entry among the runs, the learned connections (saved), the sync locks still held (released).
   * Once; later calls wait for it.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    const steps: Array<() => unknown> = [
      // The writer compacts the record when its lines outgrow its files (see verified-log.ts).
      async () => (await this.#verified?.catch(() => undefined))?.closeAndCompact(),
      async () => (await this.#readOnly?.catch(() => undefined))?.close(),
      () => this.#runs?.joined?.leave(),
      () => this.#learned?.save(),
      ...[...this.#locks].map((lock) => () => lock.release()),
    ];
    let failure: unknown;
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        // Every step runs; the first failure is told.
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  #useable(): void {
    if (this.#closed) throw new Error(`The data root ${this.dir} was closed.`);
  }
}

/** The record `opened`, widened to `scope` (see `VerifiedRecord.widen`). */
async function widened(
  opened: Promise<VerifiedRecord>,
  scope: VerifiedScope | undefined,
): Promise<VerifiedRecord> {
  const record = await opened;
  await record.widen(scope);
  return record;
}
