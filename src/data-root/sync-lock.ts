/**
 * One sync at a time per data root and filter set: a lock file created exclusively, holding the owner's process
 * id and host. A second run finds it and refuses (exit 75), so cron runs never pile up; a lock whose owner is
 * gone (killed, machine restarted) is taken over.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BusyError } from '../core/errors.js';
import { processAlive } from '../core/process-alive.js';
import { NO_FOLLOW } from './safe-writes.js';

/** A lock another host holds is trusted for this long after it was taken, since its process cannot be asked. */
const OTHER_HOST_LOCK_MS = 24 * 60 * 60 * 1000;
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

/** Whether the owner of a lock still runs; `ageMs` is the lock file's age. */
function ownerAlive(owner: LockOwner | undefined, ageMs: number): boolean {
  if (!owner) return ageMs < UNREADABLE_LOCK_MS;
  if (owner.host !== hostname()) return Date.now() - Date.parse(owner.since) < OTHER_HOST_LOCK_MS;
  return owner.pid !== process.pid && processAlive(owner.pid);
}

/**
 * Takes the lock `<folder>/<name>.lock`, or throws a `BusyError` naming the process that holds it. `what` words
 * the run in that message.
 */
export async function acquireLock(folder: string, name: string, what: string): Promise<SyncLock> {
  await mkdir(folder, { recursive: true });
  const file = join(folder, `${name}.lock`);
  const owner: LockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt += 1) {
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
      return {
        file,
        async release() {
          // Only our own lock: one taken over meanwhile (it should not be) is not ours to remove.
          const now = await readOwner(file);
          if (now?.pid === owner.pid && now.host === owner.host) await rm(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const stats = await lstat(file).catch(() => undefined);
    if (!stats) continue;
    const holder = await readOwner(file);
    if (ownerAlive(holder, Date.now() - stats.mtimeMs)) {
      const who = holder
        ? `process ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}, since ${holder.since}`
        : 'a process starting now';
      throw new BusyError(`Another ${what} is running (${who}); not starting a second one.`, {
        pid: holder?.pid,
        hint: `Its lock is ${file}.`,
      });
    }
    // The owner is gone: take the lock over.
    await rm(file, { force: true });
  }
  throw new BusyError(`Could not take the lock ${file}: other runs keep taking it.`);
}
