/**
 * The held files deleted here since a sync fetched them, so that a plain run fetches them again without asking the
 * archive for the whole selection: a held file the run's listing of the data root found is there; one it did not
 * find gets one `lstat` (a few at a time), which says whether it is gone.
 */

import { lstat } from 'node:fs/promises';
import { runPool } from '../core/batch.js';
import type { SyncState } from '../data-root/index.js';
import { resolveLocalPath } from '../naming/layout.js';
import type { LocalFiles } from './local-files.js';
import { superseded } from './newest.js';

/** Looks at once, at most: enough to hide a network file system's latency, few enough to spare a local disk. */
const LOOKS_AT_ONCE = 16;

/** Why a look says a file is not there: the file or a folder on its way is missing. */
const GONE_CODES = new Set(['ENOENT', 'ENOTDIR']);

/** What a look at the held files found. */
export interface GoneHeld {
  /** Held files deleted here, to fetch again. */
  gone: string[];
  /** Held files deleted here that the archive no longer offers: forgotten by the state, not fetched. */
  withdrawn: string[];
}

/**
 * The held files of `state` deleted here (of the newest version held of each product and day, unless every
 * version is kept), told by `local` and, for those it did not list, a look at each. `offered`, when the whole
 * selection was asked for: what the archive offers; a file deleted here that it no longer offers is taken out of
 * the state's held and failed files (it would fail on every run).
 */
export async function findGoneHeld(
  state: SyncState,
  local: LocalFiles,
  allVersions: boolean,
  offered: ReadonlyMap<string, unknown> | undefined,
): Promise<GoneHeld> {
  const held = Object.keys(state.held);
  // A held file the listing found is there: the others only are looked at, and only they need the versions.
  const unlisted = local.heldListed === held.length ? [] : held.filter((path) => !local.listed(path));
  const older = new Set(
    allVersions || unlisted.length === 0 ? [] : superseded(held, (path) => local.versionOf(path)),
  );
  const gone = await goneFiles(
    local.dataDir,
    unlisted.filter((path) => !older.has(path)),
  );
  if (!offered) return { gone, withdrawn: [] };
  const withdrawn = gone.filter((path) => !offered.has(path));
  for (const path of withdrawn) delete state.held[path];
  state.failed = state.failed.filter((path) => !withdrawn.includes(path));
  return { gone: gone.filter((path) => offered.has(path)), withdrawn };
}

/**
 * Those of `paths` (storage paths) that are no longer at their place below `dataDir`. A look that fails for
 * another reason (a folder it may not read) counts the file as there: a run never fetches what it cannot tell
 * is missing.
 */
export async function goneFiles(dataDir: string, paths: readonly string[]): Promise<string[]> {
  const gone = new Array<boolean>(paths.length).fill(false);
  await runPool(paths.length, LOOKS_AT_ONCE, async (index) => {
    let localPath: string;
    try {
      localPath = resolveLocalPath(dataDir, paths[index] as string);
    } catch {
      // A path the naming rules refuse is no file this sync could have fetched.
      return;
    }
    try {
      await lstat(localPath);
    } catch (error) {
      gone[index] = GONE_CODES.has((error as NodeJS.ErrnoException).code ?? '');
    }
  });
  return paths.filter((_, index) => gone[index]);
}
