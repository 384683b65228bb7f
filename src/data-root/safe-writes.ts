/**
 * The local data root as a place to write: checked once before a batch sends anything, folders made below it
 * without ever passing through a symbolic link that leads outside it, and file-system errors told in words.
 */
import { type BigIntStats, constants, lstatSync, mkdirSync } from 'node:fs';
import { mkdir, open, stat, statfs, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { type ErrorCode, LocalFileError } from '../core/errors.js';
import { NO_FOLLOW } from '../core/no-follow.js';
import { realPathSync } from '../core/real-path.js';
import { formatBytes, withThousands } from '../core/text.js';
import { isInside } from '../naming/layout.js';

/** What common file-system errors mean, in words. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EFBIG: 'the file is larger than this system lets a process write',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENAMETOOLONG: 'the path is longer than the file system allows',
  EIO: 'an input/output error of the disk',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder',
  ELOOP: 'it is a symbolic link',
  EMFILE: 'too many open files',
};

/** Codes of errors every file of a batch would hit: the batch stops after the first. */
const WHOLE_ROOT_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/** A local file failure, worded with what was being done and what the error means. */
export function localError(what: string, error: unknown, code?: ErrorCode): LocalFileError {
  if (error instanceof LocalFileError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const words = errno ? ERRNO_WORDS[errno] : undefined;
  const message = words ? `${words} (${errno})` : error instanceof Error ? error.message : String(error);
  const wholeRoot = errno !== undefined && WHOLE_ROOT_ERRNOS.has(errno);
  return new LocalFileError(`${what}: ${message}.`, {
    cause: error,
    code: code ?? (wholeRoot ? 'E_DATA_ROOT' : 'E_LOCAL_FILE'),
    ...(wholeRoot ? { hint: 'Free some space, or choose a data root on another disk.' } : {}),
  });
}

/** Probes made by this process so far: part of each probe's name. */
let probes = 0;

/**
 * Checks that files can be created in the data root (making it when missing), before any request: a read-only,
 * full or forbidden root is reported once, in words, instead of once per file after asking the service.
 */
export async function checkWritableRoot(root: string): Promise<void> {
  const fail = (error: unknown) => {
    const failure = localError(`Cannot write in the data root ${root}`, error, 'E_DATA_ROOT');
    return new LocalFileError(failure.message, {
      code: 'E_DATA_ROOT',
      cause: error,
      hint: 'Choose a data root this user can write to.',
    });
  };
  try {
    await mkdir(root, { recursive: true });
  } catch (error) {
    throw await rootFailure(root, error, fail);
  }
  // Unique to this process and this call; a name taken after all is an error (the probe is created with O_EXCL),
  // not a file of another's replaced. Not a secret: Math.random spares loading node:crypto (~4 ms) for it.
  probes += 1;
  const probe = join(
    root,
    `.mission-data-probe-${process.pid}-${probes}-${Math.random().toString(36).slice(2, 10)}`,
  );
  try {
    await writeNewFile(probe, 'probe\n', 0o600);
  } catch (error) {
    throw fail(error);
  } finally {
    await unlink(probe).catch(() => undefined);
  }
}

const ROOT_HINT = 'Choose a folder as the data root';

/** The error of a data root that is a file (or anything but a folder): the path given is the mistake. */
function notAFolder(root: string, cause?: unknown): LocalFileError {
  return new LocalFileError(`The data root ${root} is a file, not a folder.`, {
    code: 'E_DATA_ROOT',
    cause,
    hint: ROOT_HINT,
    usage: true,
  });
}

/**
 * What is at the data root, for a command that only reads it: `folder`, or `missing` (nothing there yet). A file
 * (or anything but a folder) is refused as `download` refuses it; a root that cannot be looked at says why.
 */
export async function lookAtRoot(root: string): Promise<'folder' | 'missing'> {
  try {
    return (await stat(root)).isDirectory() ? 'folder' : Promise.reject(notAFolder(root));
  } catch (error) {
    if (error instanceof LocalFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ENOTDIR') {
      throw new LocalFileError(`The data root ${root} is not a folder: a part of its path is a file.`, {
        code: 'E_DATA_ROOT',
        cause: error,
        hint: ROOT_HINT,
        usage: true,
      });
    }
    throw localError(`Cannot read the data root ${root}`, error, 'E_DATA_ROOT');
  }
}

/** The error of a data root that is not there, for a command that only reads it (`verify`). */
export function missingRoot(root: string): LocalFileError {
  return new LocalFileError(`The data root ${root} does not exist.`, {
    code: 'E_DATA_ROOT',
    hint: ROOT_HINT,
    usage: true,
  });
}

/**
 * Why the data root could not be made, in words: a recursive `mkdir` says `EEXIST` for a root that is a file,
 * and `ENOENT` below a read-only mount, where the cause (`EROFS`, `EACCES`) is what making its first missing
 * folder says.
 */
async function rootFailure(root: string, error: unknown, fail: (cause: unknown) => LocalFileError) {
  const isFile = async (path: string) => {
    const stats = await stat(path).catch(() => undefined);
    return stats !== undefined && !stats.isDirectory();
  };
  if (await isFile(root)) {
    return notAFolder(root, error);
  }
  let missing = resolve(root);
  let parent = dirname(missing);
  while (parent !== missing && (await stat(parent).catch(() => undefined)) === undefined) {
    missing = parent;
    parent = dirname(parent);
  }
  if (await isFile(parent)) {
    return new LocalFileError(`Cannot make the data root ${root}: ${parent} is a file, not a folder.`, {
      code: 'E_DATA_ROOT',
      cause: error,
      hint: ROOT_HINT,
      usage: true,
    });
  }
  const cause = await mkdir(missing).then(
    () => error,
    (inner: unknown) => inner,
  );
  return fail(cause);
}

/**
 * Writes a file that must not exist yet: created exclusively and never through a symbolic link, so nothing
 * planted under its name is written through. `contents` may come in pieces, written one after another.
 */
export async function writeNewFile(
  path: string,
  contents: string | Iterable<string>,
  mode: number,
): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
    mode,
  );
  try {
    for (const piece of typeof contents === 'string' ? [contents] : contents) await handle.write(piece);
  } finally {
    await handle.close();
  }
}

/** O_NOFOLLOW where the platform has it (exclusive creates need no more; opens of existing files use `openNoFollow`). */
export { NO_FOLLOW };

/**
 * Makes `folder` (below `root`) and every folder on the way, refusing a folder that is a symbolic link
 * leading outside the data root. The root itself may be a link; `realRoot` is its real path when the caller
 * knows it already (a batch resolves it once, not once per folder). Returns what the folder's last step was once
 * walked (its `lstat`, device and inode exact): a batch holds the folder to it at each file's turn.
 *
 * Synchronous, as a part's creation is (`download/part/`): a look at metadata the kernel holds costs less than
 * its two hand-overs to the thread pool and back, and a batch of small files makes a folder every few files.
 */
export function ensureFolderInside(root: string, folder: string, realRoot?: string): BigIntStats {
  const insideOf = realRoot ?? realPathOr(root, root);
  const steps = relative(root, folder)
    .split(sep)
    .filter((step) => step !== '');
  let current = root;
  let stats: BigIntStats | undefined;
  for (const step of steps) {
    current = join(current, step);
    stats = lstatSync(current, { bigint: true, throwIfNoEntry: false });
    if (!stats) {
      try {
        mkdirSync(current);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw localError(`Cannot create the folder ${current}`, error);
        }
      }
      stats = lstatSync(current, { bigint: true });
    }
    if (stats.isSymbolicLink()) {
      const target = realPathOr(current, undefined);
      if (target === undefined || !isInside(insideOf, target)) {
        throw new LocalFileError(
          `Refusing to write through ${current}: it is a symbolic link to ${target ?? 'a missing place'}, outside the data root ${insideOf}.`,
          { code: 'E_UNSAFE_PATH', hint: 'Remove the link, or make it a real folder inside the data root.' },
        );
      }
    } else if (!stats.isDirectory()) {
      throw new LocalFileError(`Cannot create the folder ${current}: a file of that name is in the way.`);
    }
  }
  return stats ?? lstatSync(folder, { bigint: true });
}

/** The real path of `path`, or `otherwise` when it cannot be resolved. */
function realPathOr<Otherwise>(path: string, otherwise: Otherwise): string | Otherwise {
  try {
    return realPathSync(path);
  } catch {
    return otherwise;
  }
}

/** True when the real path of `path`'s folder lies inside the data root's real path (no link leads out). */
export function folderStaysInside(realRoot: string, path: string): boolean {
  try {
    return isInside(realRoot, realPathSync(dirname(path)));
  } catch {
    return false;
  }
}

/** Files that leave less than this to fetch are not worth a look at the free space. */
const CHECK_SPACE_FROM_BYTES = 1024 * 1024;

/** Two sizes as a message compares them: exact bytes when rounding would make them look the same. */
export function twoSizes(a: number, b: number): [string, string] {
  const [first, second] = [formatBytes(a), formatBytes(b)];
  if (first !== second) return [first, second];
  return [`${withThousands(a)} bytes`, `${withThousands(b)} bytes`];
}

/**
 * Refuses, before its bytes are fetched, a file the disk of `folder` cannot hold: `needed` bytes more than
 * are free. The message says how much is needed and how much is free. A file system that cannot tell is
 * not refused (its writes still fail in words if it fills up).
 */
export async function checkFreeSpace(folder: string, needed: number, destination: string): Promise<void> {
  if (needed < CHECK_SPACE_FROM_BYTES) return;
  const stats = await statfs(folder).catch(() => undefined);
  if (!stats) return;
  const free = stats.bavail * stats.bsize;
  if (free >= needed) return;
  const [need, have] = twoSizes(needed, free);
  throw new LocalFileError(
    `Not enough space for ${destination}: it needs ${need} more and the disk has ${have} free; nothing was fetched.`,
    { code: 'E_NO_SPACE', hint: 'Free some space, or choose a data root on another disk.' },
  );
}
