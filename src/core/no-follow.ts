/**
 * Opening a file without following a symbolic link (or a Windows junction) at its last segment, on every system.
 * Linux and macOS have `O_NOFOLLOW`: the kernel refuses a link with ELOOP. Windows has no such flag (Node's
 * `constants.O_NOFOLLOW` is undefined there, and a junction needs no privilege to make), so there the path is
 * looked at first and the file opened is held to what was looked at: a link is refused with the same ELOOP, and
 * a link put in its place between the look and the open is caught by the file's identity.
 *
 * An exclusive create (`O_CREAT | O_EXCL`) needs none of this anywhere: it fails on any existing name, link or not.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';

/** `O_NOFOLLOW` where the system has it; 0 where it has not (Windows). */
export const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0;

/** The error a kernel gives for a link met where none may be followed. */
function linkRefused(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ELOOP: a symbolic link is not followed, open '${path}'`), {
    code: 'ELOOP',
    errno: -40,
    syscall: 'open',
    path,
  });
}

/** True when the file opened is the one looked at (same device and file id). */
function sameFile(looked: Stats, opened: Stats): boolean {
  return looked.dev === opened.dev && looked.ino === opened.ino;
}

/**
 * Opens `path` with `flags`, never through a link at its last segment (ELOOP). `noFollow` is the system's
 * `O_NOFOLLOW` (0 plays a system without it, as Windows is).
 */
export async function openNoFollow(
  path: string,
  flags: number,
  mode?: number,
  noFollow: number = NO_FOLLOW,
): Promise<FileHandle> {
  if (noFollow !== 0) return open(path, flags | noFollow, mode);
  const looked = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (looked?.isSymbolicLink()) throw linkRefused(path);
  const handle = await open(path, flags, mode);
  if (looked && !sameFile(looked, await handle.stat())) {
    await handle.close();
    throw linkRefused(path);
  }
  return handle;
}

/** `openNoFollow`, synchronous: a file descriptor. */
export function openNoFollowSync(
  path: string,
  flags: number,
  mode?: number,
  noFollow: number = NO_FOLLOW,
): number {
  if (noFollow !== 0) return openSync(path, flags | noFollow, mode);
  const looked = lstatSync(path, { throwIfNoEntry: false });
  if (looked?.isSymbolicLink()) throw linkRefused(path);
  const fd = openSync(path, flags, mode);
  if (looked && !sameFile(looked, fstatSync(fd))) {
    closeSync(fd);
    throw linkRefused(path);
  }
  return fd;
}
