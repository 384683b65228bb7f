/**
 * The download runs working in one data root: each batch puts an entry `<pid>-<tag>@<host>` in
 * `<data root>/.mission-data/runs/` before it claims its first part and removes it at its end.
 *
 * Why a folder of entries: a batch must see, at each file's turn, the part another run is writing for that file
 * (`<name>.part.<pid>`), without a listing of the file's folder per file (a batch of 12,000 small files would pay
 * for it). Knowing the other runs' pids, one `lstat` of `<name>.part.<pid>` per other run answers it; alone, the
 * cost is one `stat` of this folder per file. A run that starts later is seen at the next turn: its entry changes
 * the folder's modification time. Timestamps are coarse (a clock tick), so a folder changed within the last
 * few ticks is listed again at every look, and a change in the same tick as the last listing is never missed.
 *
 * An entry names its run's pid and host id, which cannot say alone whether the run still works: Windows gives a
 * dead run's pid to a new process within minutes, and another host's process cannot be asked. So each run touches
 * its entry while it works, and an entry untouched for longer than the stale age is a dead run's, whatever its pid
 * (as the sync lock, `sync-lock.ts`); an entry of this host whose pid runs no process is one at once.
 */
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { hostId } from '../core/host-id.js';
import { processAlive } from '../core/process-alive.js';
import { STATE_NAMES, stateFolder } from './state-folder.js';
import type { LockAges } from './sync-lock.js';

/**
 * A folder changed more recently than this is listed again at every look (see above): a clock tick or two where
 * the file system keeps fractions of a second (ext4, XFS, tmpfs: ticks of 10 ms at most), two seconds where its
 * times are whole seconds (FAT keeps two). Listing at every look for a whole second cost a batch of 1,000 small
 * files two thousand more system calls.
 */
const RECENT_MS = 50;
const RECENT_COARSE_MS = 2000;
/** How often a run touches its entry, and after how long untouched an entry is a dead run's (as the sync lock's). */
const REFRESH_MS = 30_000;
const STALE_MS = 120_000;

/** A host as an entry's name carries it. */
function hostTag(host: string): string {
  return host.replace(/[^A-Za-z0-9.-]/g, '_');
}

/** True when an entry's host tag is this host's: its id, or the host name versions before the id wrote. */
function isThisHostTag(tag: string): boolean {
  return tag === hostTag(hostId()) || tag === hostTag(hostname());
}

/** This run's entry among the runs of a data root, and what it sees of the others. */
export class DownloadRuns {
  readonly #folder: string;
  readonly #entry: string;
  readonly #staleMs: number;
  readonly #refreshMs: number;
  readonly #refresher: NodeJS.Timeout;
  #seenMtimeMs = Number.NaN;
  /** When the folder was last listed: entries going stale change nothing a look would see. */
  #listedAt = 0;
  /** The other runs seen at the last listing; `local` when of this host (whose pids can be asked). */
  #others: Array<{ pid: number; local: boolean }> = [];
  /** See `shared`. */
  #shared = false;

  private constructor(folder: string, entry: string, ages: LockAges) {
    this.#folder = folder;
    this.#entry = entry;
    this.#staleMs = ages.staleMs ?? STALE_MS;
    this.#refreshMs = ages.refreshMs ?? REFRESH_MS;
    this.#refresher = setInterval(() => this.#touch(), this.#refreshMs);
    this.#refresher.unref();
  }

  /**
   * Puts this run's entry in the data root; undefined when the state folder cannot take it (the batch then
   * behaves as a run alone, as before). `ages` shortens the refresh and stale ages for tests.
   */
  static join(root: string, ages: LockAges = {}): DownloadRuns | undefined {
    const folder = join(stateFolder(root), STATE_NAMES.runs);
    const entry = `${process.pid}-${Math.random().toString(36).slice(2, 8)}@${hostTag(hostId())}`;
    try {
      mkdirSync(folder, { recursive: true });
      if (!statSync(folder).isDirectory()) return undefined;
      writeFileSync(join(folder, entry), '', { flag: 'wx', mode: 0o644 });
    } catch {
      return undefined;
    }
    const runs = new DownloadRuns(folder, entry, ages);
    try {
      runs.#list(statSync(folder).mtimeMs);
    } catch {
      // Looked at again at the first file's turn.
    }
    if (runs.#others.length > 0) runs.#shared = true;
    return runs;
  }

  /** True once another run was seen in this data root, or came or went, during this batch. */
  get shared(): boolean {
    return this.#shared;
  }

  /**
   * The pids of the other live download runs of this host (and of the runs of other hosts, which cannot be
   * asked). Cheap alone: one `stat` of the folder.
   */
  others(): readonly number[] {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.#folder).mtimeMs;
    } catch {
      return this.#others.map((run) => run.pid);
    }
    if (mtimeMs !== this.#seenMtimeMs) {
      // A run came or went since the last look: even one that came and went between two looks may have put
      // files in place that this batch looked up ahead of their turn.
      this.#shared = true;
      this.#list(mtimeMs);
    } else if (
      Date.now() - mtimeMs < (Number.isInteger(mtimeMs / 1000) ? RECENT_COARSE_MS : RECENT_MS) ||
      (this.#others.length > 0 && Date.now() - this.#listedAt >= this.#refreshMs)
    ) {
      this.#list(mtimeMs);
    } else if (this.#others.length > 0) {
      this.#others = this.#others.filter((run) => !run.local || processAlive(run.pid));
    }
    if (this.#others.length === 0) return [];
    this.#shared = true;
    return this.#others.map((run) => run.pid);
  }

  /** Removes this run's entry. */
  leave(): void {
    clearInterval(this.#refresher);
    rmSync(join(this.#folder, this.#entry), { force: true });
  }

  /** Tells the other runs this one still works: a touch changes the entry's time, not the folder's. */
  #touch(): void {
    try {
      const now = new Date();
      utimesSync(join(this.#folder, this.#entry), now, now);
    } catch {
      // Removed by a run that found it stale (this process was stopped that long): the others saw it go.
    }
  }

  /** Whether an entry is a dead run's: untouched too long, or of this host with no process at its pid. */
  #dead(name: string, pid: number, local: boolean): boolean {
    if (local && !processAlive(pid)) return true;
    const stats = statSync(join(this.#folder, name), { throwIfNoEntry: false });
    return stats === undefined || Date.now() - stats.mtimeMs >= this.#staleMs;
  }

  #list(mtimeMs: number): void {
    let names: string[];
    try {
      names = readdirSync(this.#folder);
    } catch {
      return;
    }
    this.#seenMtimeMs = mtimeMs;
    this.#listedAt = Date.now();
    const others: Array<{ pid: number; local: boolean }> = [];
    for (const name of names) {
      if (name === this.#entry) continue;
      const found = /^(\d+)-[a-z0-9]+@(.+)$/.exec(name);
      if (!found) continue;
      const pid = Number(found[1]);
      const local = isThisHostTag(found[2] as string);
      // Another batch of this process: `PartFile`'s own claims keep the two apart.
      if (local && pid === process.pid) continue;
      if (this.#dead(name, pid, local)) {
        // Left by a run that was killed: nobody else removes it.
        rmSync(join(this.#folder, name), { force: true });
        continue;
      }
      others.push({ pid, local });
    }
    this.#others = others;
  }
}
