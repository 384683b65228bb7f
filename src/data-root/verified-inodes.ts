/**
 * Whether the file system of a data root's state folder keeps a file's inode number: the verified record trusts
 * a file's inode only where it does (see `VerifiedRecord.matches`), and compacts its log only where it does
 * (a writer tells a replaced log by its inode, see `verified-log.ts`).
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../core/replace-file.js';
import { writeNewFile } from './safe-writes.js';
import { STATE_NAMES } from './state-folder.js';

/** What the probe's record holds: the probe file's inode number and change time, and whether they stay put. */
interface InodeProbe {
  ino: number;
  ctimeMs: number;
  stable: boolean;
}

/**
 * Whether the file system of the state `folder` keeps a file's inode number, found by a probe file made there once
 * and never written again. It is made under another name and renamed into place: a file system that numbers a
 * renamed file anew (exFAT and FAT on Windows) shows it then. Later, the probe with its change time unchanged but
 * another number shows one that numbers files anew at each mount (exfat-fuse numbers them in the order it is
 * asked); another change time means the probe itself was copied (a root moved to another disk), so it is measured
 * again. A change seen once is written down. `create` makes and records (a reader leaves the root as it found
 * it). Any failure answers true: the inode then counts, which costs requests, never trust.
 */
export async function inodesStayPut(folder: string, create: boolean): Promise<boolean> {
  const probe = join(folder, STATE_NAMES.inodeProbe);
  const known = await readProbe(`${probe}.json`);
  if (known?.stable === false) return false;
  const stats = await lstat(probe).catch(() => undefined);
  if (!stats?.isFile()) return create ? makeProbe(probe) : true;
  if (known === undefined || stats.ino === known.ino) return true;
  const renumbered = stats.ctimeMs === known.ctimeMs;
  if (create) {
    const now = { ino: stats.ino, ctimeMs: stats.ctimeMs, stable: !renumbered };
    await writeProbeRecord(`${probe}.json`, now).catch(() => undefined);
  }
  return !renumbered;
}

async function readProbe(path: string): Promise<InodeProbe | undefined> {
  try {
    const probe = JSON.parse(await readFile(path, 'utf8')) as Partial<InodeProbe>;
    const { ino, ctimeMs, stable } = probe;
    if (typeof ino !== 'number' || typeof ctimeMs !== 'number' || typeof stable !== 'boolean')
      return undefined;
    return { ino, ctimeMs, stable };
  } catch {
    return undefined;
  }
}

/** Makes the probe (under another name first, then renamed) and records it; whether its number survived the rename. */
async function makeProbe(probe: string): Promise<boolean> {
  const temporary = `${probe}.${process.pid}.tmp`;
  try {
    await writeNewFile(temporary, '', 0o644);
    const before = await lstat(temporary);
    await replaceFile(temporary, probe);
    const after = await lstat(probe);
    const stable = after.ino === before.ino;
    await writeProbeRecord(`${probe}.json`, { ino: after.ino, ctimeMs: after.ctimeMs, stable });
    return stable;
  } catch {
    // Made by another process at the same moment, or not at all: the next run looks again.
    return true;
  }
}

/** Writes the probe's record whole (a temporary file renamed over the old one). */
async function writeProbeRecord(path: string, probe: InodeProbe): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeNewFile(temporary, `${JSON.stringify(probe)}\n`, 0o644);
  await replaceFile(temporary, path);
}
