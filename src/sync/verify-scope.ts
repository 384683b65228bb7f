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

/** Lists the root and asks the archive at once; settles nothing. */
export async function passScope(
  http: Pick<VerifyHttp, 'queryPages'>,
  params: QueryParams,
  filters: QueryFilters,
  options: { dataDir: string; signal?: AbortSignal | undefined; pageSize?: number | undefined },
): Promise<PassScope> {
  const archive = new Set<string>();
  const files: string[] = [];
  const strays: Array<{ path: string; reason: string }> = [];
  const ask = async () => {
    const pages = http.queryPages(params, { signal: options.signal, pageSize: options.pageSize });
    for await (const page of pages) for (const path of recordPaths(page)) archive.add(path);
  };
  await Promise.all([
    ask(),
    listLocalCopy(options.dataDir, filters, (path, file, entry) => {
      if (file) files.push(path);
      // In the scan's words: no regular file, or a name or place that breaks the naming rules.
      else
        strays.push({
          path,
          reason: localEntryOf(options.dataDir, path, entry).problem ?? 'breaks the naming rules',
        });
    }),
  ]);
  const toLocal = localPathOf(options.dataDir);
  const held: string[] = [];
  for (const path of files) {
    if (archive.has(path)) held.push(path);
    else strays.push({ path, reason: 'not in the archive' });
  }
  held.sort(byString);
  const extras = strays
    .sort((a, b) => byString(a.path, b.path))
    .map(({ path, reason }): VerifyEntry => ({ status: 'extra', path, localPath: toLocal(path), reason }));
  return { held, extras };
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
