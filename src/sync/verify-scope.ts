/**
 * What a `verify` pass is about: the files of the data root in scope that the archive holds, and the entries in
 * scope that are not its (`extra`), found by listing the root while the archive is asked. Only storage paths are
 * kept (over 100,000 files, the listing's entries with their parsed names and joined local paths held ~100 MiB).
 */
import { join, sep } from 'node:path';
import { listLocalCopy, localEntryOf, recordPaths } from '../coverage/run.js';
import type { QueryFilters, QueryParams } from '../naming/query-vocabulary.js';
import type { VerifyEntry, VerifyHttp } from './verify-entries.js';

/** The files of a pass, by storage path in order, and the entries it settles as `extra`. */
export interface PassScope {
  held: string[];
  extras: VerifyEntry[];
}

/**
 * The local path of each storage path below `root`, as `join(root, ...path.split('/'))` makes it, sharing the
 * path's characters instead of a string of its own (the paths listed have no `.`, `..` or empty segments).
 */
export function localPathOf(root: string): (path: string) => string {
  const base = join(root);
  const prefix = base === '.' ? '' : base.endsWith(sep) ? base : `${base}${sep}`;
  return sep === '/' ? (path) => prefix + path : (path) => prefix + path.replaceAll('/', sep);
}

/** The files found in the root within the filters (by storage path, in order), and what is no file of the mission there. */
export interface LocalListing {
  files: string[];
  strays: Array<{ path: string; reason: string }>;
}

/** The root being listed and the archive being asked, at once: each answer as it comes. */
export interface ScopeAsked {
  /** The root's listing, often long before the archive's answer (a pass may start reading files meanwhile). */
  local: Promise<LocalListing>;
  /** The pass's scope, once both answered. */
  scope: Promise<PassScope>;
}

/** Lists the root and asks the archive at once; settles nothing. */
export function askScope(
  http: Pick<VerifyHttp, 'queryPages'>,
  params: QueryParams,
  filters: QueryFilters,
  options: { dataDir: string; signal?: AbortSignal | undefined; pageSize?: number | undefined },
): ScopeAsked {
  const ask = async () => {
    const archive = new Set<string>();
    const pages = http.queryPages(params, { signal: options.signal, pageSize: options.pageSize });
    for await (const page of pages) for (const path of recordPaths(page)) archive.add(path);
    return archive;
  };
  const list = async (): Promise<LocalListing> => {
    const files: string[] = [];
    const strays: LocalListing['strays'] = [];
    await listLocalCopy(options.dataDir, filters, (path, file, entry) => {
      if (file) files.push(path);
      // In the scan's words: no regular file, or a name or place that breaks the naming rules.
      else
        strays.push({
          path,
          reason: localEntryOf(options.dataDir, path, entry).problem ?? 'breaks the naming rules',
        });
    });
    files.sort(byString);
    return { files, strays };
  };
  const local = list();
  const scope = Promise.all([ask(), local]).then(([held, listing]) =>
    scopeOf(held, listing, options.dataDir),
  );
  // A caller that stopped at a failed listing never awaits the scope: its failure is then nobody's to hear.
  scope.catch(() => undefined);
  return { local, scope };
}

/** The files held (found here and in the archive), in order, and the entries of those that are not the archive's. */
function scopeOf(archive: ReadonlySet<string>, { files, strays }: LocalListing, dataDir: string): PassScope {
  const toLocal = localPathOf(dataDir);
  const held: string[] = [];
  const extra = [...strays];
  for (const path of files) {
    if (archive.has(path)) held.push(path);
    else extra.push({ path, reason: 'not in the archive' });
  }
  const extras = extra
    .sort((a, b) => byString(a.path, b.path))
    .map(({ path, reason }): VerifyEntry => ({ status: 'extra', path, localPath: toLocal(path), reason }));
  return { held, extras };
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
