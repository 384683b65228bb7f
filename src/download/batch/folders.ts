/**
 * The destination folders of one batch: each made safe once, then held at each file's turn to what was checked.
 *
 * What is checked where, for a folder on the way to a destination that is (or becomes) a symbolic link:
 * - once per folder and batch (`FolderCache.ensure`): every step below the data root is walked; a link that
 *   leads outside the root is refused (`ensureFolderInside`), and what the folder's last step was is kept,
 *   device and inode. The root's real path is resolved once per batch, not per folder.
 * - before each write in the folder (the part's creation, the taking over of another run's leftover, each write
 *   of the part's record): one `lstat` of the folder (`CheckedFolder.confirm`). The same directory as checked
 *   passes; anything else (a link put in its place or on the way to it leads to another directory, a folder made
 *   anew, a file system that numbers nothing) is checked again in full by its real path, and refused when that
 *   leads outside the data root. Where the last step is a link (inside the root, allowed) it is the real path
 *   every time: an `lstat` of a link says nothing of where it leads. The directory checked itself, moved out of
 *   the root along with a folder above it that a link then replaces, is still that directory: only someone who can
 *   write where it went could have moved it there.
 * - the files themselves are never opened through a link: a part is created exclusively with `O_NOFOLLOW`, an
 *   existing one opened with `openNoFollow` (see `claimPart` in `download/part/part-leftovers.ts`).
 * The part's bytes go to the descriptor opened, wherever its folder is moved later; its rename into place goes by
 * the folder's path again, and through a link put there since it finds no part of this run to move (the part is
 * in the folder checked), so it fails instead of putting a file elsewhere. One `lstat` per file replaces the real
 * path of the folder per file (one `readlink` per step from `/`: ten for a month folder of a root five deep).
 */
import { type BigIntStats, lstatSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { LocalFileError } from '../../core/errors.js';
import { realPathSync } from '../../core/real-path.js';
import { ensureFolderInside, folderStaysInside, isPartName } from '../../data-root/index.js';

/** A folder made safe in this batch: the names of the parts it held then, and the check before each write. */
export class CheckedFolder {
  #dev: bigint;
  #ino: bigint;
  /** False where the last check cannot be repeated by identity: the folder's last step is a link, or no inode. */
  #byIdentity: boolean;

  constructor(
    /** The folder's path, as destinations in it are built. */
    readonly path: string,
    /** The data root's real path. */
    private readonly realRoot: string,
    checked: BigIntStats,
    /** The names of the parts the folder held when it was made safe: the leftovers a file's claim looks at. */
    readonly partNames: ReadonlySet<string>,
  ) {
    this.#dev = checked.dev;
    this.#ino = checked.ino;
    this.#byIdentity = checked.isDirectory() && checked.ino !== 0n;
  }

  /**
   * Before a write at `path` (a file of this folder): throws `E_UNSAFE_PATH` when the folder now leads outside
   * the data root. One `lstat` when it is the directory checked; its real path otherwise. A folder gone is not
   * refused here: the write that follows fails and says so.
   */
  confirm(path: string): void {
    const now = lstatSync(this.path, { bigint: true, throwIfNoEntry: false });
    if (now === undefined) return;
    if (this.#byIdentity && now.isDirectory() && now.dev === this.#dev && now.ino === this.#ino) return;
    if (!folderStaysInside(this.realRoot, path)) {
      throw new LocalFileError(
        `Refusing to write ${path}: its folder ${dirname(path)} now leads outside the data root ${this.realRoot}.`,
        { code: 'E_UNSAFE_PATH', hint: 'Remove the link, or make it a real folder inside the data root.' },
      );
    }
    // Another directory inside the root (the folder made anew, a link inside): held to that one from now on.
    this.#dev = now.dev;
    this.#ino = now.ino;
    this.#byIdentity = now.isDirectory() && now.ino !== 0n;
  }
}

/**
 * Folders made safe in this batch: files of one product share their month folder, and walking it (with its
 * symbolic-link check) per file is a measurable part of downloading many small files. The walk and the listing
 * are synchronous (see `ensureFolderInside`).
 */
export class FolderCache {
  readonly #made = new Map<string, CheckedFolder>();
  #realRoot: string | undefined;

  constructor(private readonly root: string) {}

  /** Makes the folder safe to write in; returns it, with the names of the parts it held then. */
  ensure(folder: string): CheckedFolder {
    let made = this.#made.get(folder);
    if (!made) {
      this.#realRoot ??= realPathOr(this.root);
      const checked = ensureFolderInside(this.root, folder, this.#realRoot);
      made = new CheckedFolder(folder, this.#realRoot, checked, partsIn(folder));
      this.#made.set(folder, made);
    }
    return made;
  }
}

/** The real path of the data root `root`; `root` itself where it cannot be resolved. */
function realPathOr(root: string): string {
  try {
    return realPathSync(root);
  } catch {
    return root;
  }
}

/** The names of the parts in a folder: the leftovers a file's claim looks at. */
function partsIn(folder: string): ReadonlySet<string> {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    names = [];
  }
  return new Set(names.filter(isPartName));
}
