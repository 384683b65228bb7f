/**
 * One sync at a time per data root and filter set: a lock file created exclusively, holding the owner's process
 * id and host id. A second run finds it and refuses (exit 75), so cron runs never pile up.
 *
 * The owner touches the lock while it runs (every 30 s), and a lock untouched for 2 minutes is stale whatever it
 * says: its owner is gone (killed, the machine restarted or asleep). A pid alone cannot say so: Windows hands a dead
 * owner's pid to a new process within minutes, and another host's process cannot be asked. A lock of this host
 * whose pid runs no process is taken over at once, unless this very process holds it now: a lock naming this
 * process's pid is otherwise an earlier process's (a restarted container runs as the same pid again).
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rm, utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BusyError } from '../core/errors.js';
import { hostId, isThisHost } from '../core/host-id.js';
import { processAlive } from '../core/process-alive.js';
import { NO_FOLLOW } from './safe-writes.js';
import { STATE_NAMES } from './state-folder.js';

/** How often, and after how long untouched a lock is stale; tests shorten them. */
export interface LockAges {
  /** How often the owner touches its lock (default 30 s). */
  refreshMs?: number;
  /** A lock untouched for this long is stale, whoever it names (default 2 minutes). */
  staleMs?: number;
}

const REFRESH_MS = 30_000;
const STALE_MS = 120_000;
/** A lock file with no readable owner yet (being written) is left alone for this long. */
const UNREADABLE_LOCK_MS = 10_000;

interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

/** A held lock; `release` removes it. */
export interface SyncLock {
  readonly file: string;
  release(): Promise<void>;
}

async function readOwner(file: string): Promise<LockOwner | undefined> {
  try {
    const data = JSON.parse(await readFile(file, 'utf8')) as Partial<LockOwner>;
    if (typeof data.pid === 'number' && typeof data.host === 'string' && typeof data.since === 'string') {
      return data as LockOwner;
    }
  } catch {
    // Unreadable: being written, or damaged.
  }
  return undefined;
}

/** True when two owners are one taking of the lock: the same process of the same host, since the same time. */
const sameOwner = (a: LockOwner | undefined, b: LockOwner) =>
  a?.pid === b.pid && a.host === b.host && a.since === b.since;

/** The locks this process holds now, by file (resolved), each with the owner it wrote. */
const heldHere = new Map<string, LockOwner>();

/** True when the lock at `file` naming `owner` is one this process took and holds now. */
function isHeldHere(file: string, owner: LockOwner): boolean {
  return sameOwner(heldHere.get(resolve(file)), owner);
}

/** Whether the lock at `file` still holds: `ageMs` is the time since its owner last touched it. */
function lockHolds(file: string, owner: LockOwner | undefined, ageMs: number, staleMs: number): boolean {
  if (ageMs >= staleMs) return false;
  if (!owner) return ageMs < UNREADABLE_LOCK_MS;
  if (!isThisHost(owner.host)) return true;
  if (owner.pid === process.pid) return isHeldHere(file, owner);
  return processAlive(owner.pid);
}

/** Touches the lock every `refreshMs` while its owner runs; the returned function stops it. */
function keepFresh(file: string, owner: LockOwner, refreshMs: number): () => void {
  const timer = setInterval(() => {
    // Only our own lock: one taken over meanwhile (this process was stopped for longer than the stale age) is
    // another run's to keep.
    void readOwner(file)
      .then(async (now) => {
        if (!sameOwner(now, owner)) return;
        const time = new Date();
        await utimes(file, time, time);
      })
      .catch(() => undefined);
  }, refreshMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Creates the lock file; false when it exists. */
async function createLock(file: string, owner: LockOwner): Promise<boolean> {
  try {
    const handle = await open(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
      0o644,
    );
    try {
      await handle.write(`${JSON.stringify(owner)}\n`);
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The refusal that names the run holding the lock. */
function busy(file: string, what: string, holder: LockOwner | undefined, staleMs: number): BusyError {
  const who = holder
    ? `process ${holder.pid}${isThisHost(holder.host) ? '' : ` on host ${holder.host}`}, since ${holder.since}`
    : 'a process starting now';
  return new BusyError(`Another ${what} is running (${who}); not starting a second one.`, {
    pid: holder?.pid,
    hint: `Its lock is ${file}, which its owner touches while it runs: a run finding it untouched for ${Math.round(staleMs / 1000)} s takes it over.`,
  });
}

/**
 * Takes the lock `<folder>/<name>.lock`, or throws a `BusyError` naming the process that holds it. `what` words
 * the run in that message.
 */
export async function acquireLock(
  folder: string,
  name: string,
  what: string,
  ages: LockAges = {},
): Promise<SyncLock> {
  const { refreshMs = REFRESH_MS, staleMs = STALE_MS } = ages;
  await mkdir(folder, { recursive: true });
  const file = join(folder, `${name}${STATE_NAMES.lockSuffix}`);
  const owner: LockOwner = { pid: process.pid, host: hostId(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (await createLock(file, owner)) {
      const stop = keepFresh(file, owner, refreshMs);
      heldHere.set(resolve(file), owner);
      return {
        file,
        async release() {
          stop();
          if (heldHere.get(resolve(file)) === owner) heldHere.delete(resolve(file));
          // Only our own lock: one taken over meanwhile is not ours to remove.
          if (sameOwner(await readOwner(file), owner)) await rm(file, { force: true });
        },
      };
    }
    const stats = await lstat(file).catch(() => undefined);
    if (!stats) continue;
    const holder = await readOwner(file);
    if (lockHolds(file, holder, Date.now() - stats.mtimeMs, staleMs)) throw busy(file, what, holder, staleMs);
    // The owner is gone: take the lock over.
    await rm(file, { force: true });
  }
  throw new BusyError(`Could not take the lock ${file}: other runs keep taking it.`);
}
