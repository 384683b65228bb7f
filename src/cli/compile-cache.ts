/**
 * Node 22.1 and later can keep the code it compiles for a module in a folder and read it back at the next start
 * (`module.enableCompileCache`). The bin turns it on once the command line's own modules are loaded, before a
 * command loads its own (the service client, the engines): on Node 22 and 24 a one-file download starts 7-9 ms
 * sooner (8-9 %). Node 20 has no such cache, and nothing happens there.
 *
 * The folder is the platform's cache folder (`defaultCacheFolder`), one subfolder per build: its version and the
 * time its entry module was written (a package installed by npm has one time for every file, so one folder per
 * version; a local build has one per build). The first start of a build removes the other builds' folders but
 * the two made last, so the cache holds at most three builds' code (under a megabyte each per Node version).
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, and `NODE_COMPILE_CACHE=DIR` (Node's own) puts it elsewhere,
 * unmanaged. Its gain is the command's modules' compiling: `--help`, which loads none, starts as before.
 */

import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import nodeModule from 'node:module';
import { join } from 'node:path';
import { defaultCacheFolder } from '../core/cache-folder.js';
import { packageVersion } from './package-version.js';

/** The part of `node:module` this needs, present from Node 22.1. */
export interface CompileCacheApi {
  enableCompileCache?: (directory: string) => { status: number };
  getCompileCacheDir?: () => string | undefined;
  constants?: { compileCacheStatus?: { ENABLED: number } };
}

/** Where the builds' folders live below the cache folder. */
const COMPILED_FOLDER = 'compiled-code';

/**
 * Turns Node's compile cache on for the modules loaded from now on, in this build's folder; the folder, or
 * undefined where the cache stays off (Node 20, turned off or placed by the user, a folder that cannot be made).
 * Never throws: a cache is never a reason for a command to fail.
 */
export function cacheCompiledCode(
  options: { api?: CompileCacheApi; env?: Record<string, string | undefined>; build?: string } = {},
): string | undefined {
  const api = options.api ?? (nodeModule as unknown as CompileCacheApi);
  const enabled = api.constants?.compileCacheStatus?.ENABLED;
  if (!api.enableCompileCache || enabled === undefined || api.getCompileCacheDir?.() !== undefined) {
    return undefined;
  }
  try {
    const parent = join(defaultCacheFolder(options.env), COMPILED_FOLDER);
    const build = options.build ?? thisBuild();
    const folder = join(parent, build);
    const fresh = !existsSync(folder);
    if (api.enableCompileCache(folder).status !== enabled) return undefined;
    if (fresh) removeOtherBuilds(parent, build);
    return folder;
  } catch {
    return undefined;
  }
}

/**
 * This build's name: the package's version and when the module running this (the bundle's entry,
 * `dist/mission-data.js`) was written, in base 36.
 */
function thisBuild(): string {
  const written = Math.trunc(statSync(new URL(import.meta.url)).mtimeMs).toString(36);
  return `${packageVersion().replace(/[^\w.+-]/g, '_')}-${written}`;
}

/** How many other builds' folders are kept beside this one's: two installs used by turns keep theirs. */
const OTHER_BUILDS_KEPT = 2;

/** Removes the folders of other builds below `parent` but the few made last (never through a link). */
function removeOtherBuilds(parent: string, build: string): void {
  try {
    const others = readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.name !== build && entry.isDirectory())
      .map((entry) => {
        const path = join(parent, entry.name);
        return { path, written: statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0 };
      })
      .sort((a, b) => b.written - a.written);
    for (const { path } of others.slice(OTHER_BUILDS_KEPT)) rmSync(path, { recursive: true, force: true });
  } catch {
    // Another start removing the same folders, or one it cannot: left for a later start.
  }
}
