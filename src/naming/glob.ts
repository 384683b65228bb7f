/**
 * A glob over the archive's names (`*`, `?`, `[...]`, as a shell reads them, never across a `/`): the query its
 * fixed parts spell (instrument, level, descriptor and the start dates a layout path or a name pins down), and a
 * test of each storage path the query returns. A file name glob is matched against names, a path glob against
 * storage paths.
 */
import { ANCILLARY_FOLDER, MISSION } from './mission.js';
import type { QueryFilters } from './query-vocabulary.js';

const GLOB_CHARACTER = /[*?[]/;

/** True when `text` holds a glob character (`*`, `?` or `[`). */
export function isGlob(text: string): boolean {
  return GLOB_CHARACTER.test(text);
}

/** A glob read: the filters of its fixed parts (empty when it pins nothing down) and its test. */
export interface ArchiveGlob {
  pattern: string;
  filters: QueryFilters;
  /** True when a storage path matches the glob (its name alone, for a glob without `/`). */
  matches(storagePath: string): boolean;
}

/** The regular expression of a glob: `*` any run of characters but `/`, `?` one, `[...]` a class (`[!...]` too). */
export function globExpression(pattern: string): RegExp {
  let source = '';
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at] as string;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const close = pattern.indexOf(']', at + 2);
      if (close < 0) source += '\\[';
      else {
        let inside = pattern.slice(at + 1, close);
        const negated = inside.startsWith('!') || inside.startsWith('^');
        if (negated) inside = inside.slice(1);
        source += `[${negated ? '^/' : ''}${inside.replace(/[\\\]]/g, '\\$&')}]`;
        at = close;
      }
    } else source += char.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The characters of `text` before its first glob character. */
function fixedPrefix(text: string): string {
  const at = text.search(GLOB_CHARACTER);
  return at < 0 ? text : text.slice(0, at);
}

/** Start dates a fixed date prefix pins down: `2025` a year, `202501` a month, `20250107` a day. */
function dateRange(prefix: string): Pick<QueryFilters, 'startDate' | 'endDate'> {
  const digits = /^\d*/.exec(prefix)?.[0] ?? '';
  if (digits.length >= 8) return { startDate: digits.slice(0, 8), endDate: digits.slice(0, 8) };
  if (digits.length >= 6) {
    const year = Number(digits.slice(0, 4));
    const month = Number(digits.slice(4, 6));
    if (month < 1 || month > 12) return {};
    const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
    return { startDate: `${digits.slice(0, 6)}01`, endDate: `${digits.slice(0, 6)}${days}` };
  }
  if (digits.length >= 4)
    return { startDate: `${digits.slice(0, 4)}0101`, endDate: `${digits.slice(0, 4)}1231` };
  return {};
}

/** Filters from a science file name glob: the `_` parts before the first one that holds a glob character. */
function nameFilters(name: string): QueryFilters {
  const parts = name.split('_');
  if (parts[0] !== MISSION) return {};
  const keys = ['instrument', 'dataLevel', 'descriptor'] as const;
  const filters: QueryFilters = {};
  for (let at = 1; at < parts.length; at += 1) {
    const part = parts[at] as string;
    const key = keys[at - 1];
    if (!isGlob(part)) {
      if (key) filters[key] = part;
      else if (at === 4) Object.assign(filters, dateRange(part));
      else break;
      continue;
    }
    // A glob character may stand for several parts: what follows it has no known place. Of the part itself, only
    // a start date's fixed digits say something the service can filter by.
    if (at === 4) Object.assign(filters, dateRange(fixedPrefix(part)));
    break;
  }
  return filters;
}

/** Filters from the folders of a layout path glob: `imap/<instrument>/<level>/<YYYY>/<MM>/`, up to a glob. */
function folderFilters(folders: readonly string[]): QueryFilters {
  const [mission, instrument, level, year, month] = folders;
  if (mission !== MISSION || instrument === undefined || isGlob(instrument)) return {};
  if (instrument === ANCILLARY_FOLDER) return { table: 'ancillary' };
  const filters: QueryFilters = { instrument };
  if (level === undefined || isGlob(level)) return filters;
  filters.dataLevel = level;
  if (year === undefined) return filters;
  const date = isGlob(year)
    ? fixedPrefix(year)
    : month === undefined || isGlob(month)
      ? year
      : `${year}${month}`;
  return { ...filters, ...dateRange(date.length === 4 || date.length === 6 ? date : '') };
}

/**
 * Reads a glob over storage paths (`imap/mag/l2/2025/01/*.cdf`) or names (`imap_mag_l2_norm_202501*`): the
 * filters of its fixed parts, where the folders and the name agree (the name's wins where it says more).
 */
export function readGlob(pattern: string): ArchiveGlob {
  const segments = pattern.split('/');
  const name = segments[segments.length - 1] ?? '';
  const fromFolders = segments.length > 1 ? folderFilters(segments.slice(0, -1)) : {};
  let filters: QueryFilters;
  if (fromFolders.table === 'ancillary') {
    // Ancillary names have no level: of a name, only the instrument is known.
    const instrument = name.split('_')[1];
    filters = instrument && !isGlob(instrument) ? { ...fromFolders, instrument } : fromFolders;
  } else {
    // A name's dates inside the folder's month narrow it; the instrument and level are the same either way.
    filters = { ...fromFolders, ...nameFilters(name) };
  }
  const expression = globExpression(pattern);
  const byName = segments.length === 1;
  return {
    pattern,
    filters,
    matches: (storagePath) =>
      expression.test(byName ? storagePath.slice(storagePath.lastIndexOf('/') + 1) : storagePath),
  };
}
