/**
 * The files of the data root in a sync's scope, listed once by a run (one `readdir` per folder) and asked by path:
 * which held files are still here, and the version of each, without a system call or a parse per held file. Of
 * each file only what choosing versions needs is kept (`Versioned`), not the whole parse of its name.
 */

import { resolve } from 'node:path';
import { listLocalCopy } from '../coverage/run.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { type Versioned, versioned, versionOf } from './newest.js';

/** The data root's files in a sync's scope, by storage path. */
export class LocalFiles {
  private constructor(
    /** The data root listed. */
    readonly dataDir: string,
    /** What the listing found, by storage path: the file's version, none for what breaks the naming rules. */
    readonly entries: ReadonlyMap<string, Versioned | undefined>,
    /** How many of the held files given to `scan` it listed. */
    readonly heldListed: number,
  ) {}

  /**
   * Lists the files below `dataDir` in the scope of `filters`, the ingestion dates and version left aside (those
   * choose among the archive's files, not among the files here); see `scanLocalCopy`. `held`: the sync state's
   * held files, counted as they are listed (`heldListed`).
   */
  static async scan(
    dataDir: string,
    filters: QueryFilters,
    held: Readonly<Record<string, unknown>> = {},
  ): Promise<LocalFiles> {
    const { ingestionStartDate: _start, ingestionEndDate: _end, version: _version, ...scope } = filters;
    const entries = new Map<string, Versioned | undefined>();
    // Of the few versions a root holds, one string each rather than one a file.
    const versions = new Map<string, string>();
    let heldListed = 0;
    await listLocalCopy(dataDir, scope, (path, file) => {
      // Looked up as a property name, the path is kept by V8 as one string with the state's own (the listing's
      // copy forwards to it until the next collection drops it): over 100,000 held files, 10 MB less.
      if (Object.hasOwn(held, path)) heldListed += 1;
      const found = file && versioned(file);
      if (found) {
        const version = versions.get(found.version);
        if (version === undefined) versions.set(found.version, found.version);
        else found.version = version;
      }
      entries.set(path, found);
    });
    return new LocalFiles(dataDir, entries, heldListed);
  }

  /**
   * True when the listing found something at `path` (a file, or what stands in its place): it is there. False says
   * only that the listing did not find it: the path may lie outside the scope, or behind a link the listing does
   * not follow.
   */
  listed(path: string): boolean {
    return this.entries.has(path);
  }

  /**
   * Where the listing found `path`: `resolveLocalPath`'s answer for it, without a second reading of its name (the
   * listing read it, below this root).
   */
  localPath(path: string): string {
    return resolve(this.dataDir, ...path.split('/'));
  }

  /** The version of the file a storage path names (see `versionOf`), from the listing when it read that file. */
  versionOf(path: string): Versioned | undefined {
    return this.entries.get(path) ?? versionOf(path);
  }
}
