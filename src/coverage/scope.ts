/**
 * Which files a set of query filters covers, told from a file's name alone: the same filters select files of
 * the archive (through the service) and of the data root (here), so both sides of a comparison are one scope.
 */
import { ValidationError } from '../core/errors.js';
import { ANCILLARY_FOLDER, MISSION } from '../naming/mission.js';
import type { MissionFile } from '../naming/names.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';

/** The filters a name cannot answer: the ingestion day is the archive's, not the file's. */
const ARCHIVE_ONLY_FILTERS = ['ingestionStartDate', 'ingestionEndDate'] as const;

/**
 * Refuses filters a local file cannot be matched with: comparing a data root with a part of the archive chosen
 * by ingestion day would call every local file outside that part extra.
 */
export function assertNameFilters(filters: QueryFilters, what: string): void {
  const given = ARCHIVE_ONLY_FILTERS.filter((name) => filters[name] !== undefined && filters[name] !== '');
  if (given.length > 0) {
    throw new ValidationError([
      `${what} compares files by name, and a name carries no ingestion day: leave out ${given.join(' and ')}.`,
    ]);
  }
}

/** The table the filters search. */
export function tableOf(filters: QueryFilters): 'science' | 'ancillary' {
  return filters.table === 'ancillary' ? 'ancillary' : 'science';
}

/**
 * True when the filters select `file` (a `version` of `latest` selects every version: which one is latest is
 * decided against the archive).
 */
export function matchesFilters(file: MissionFile, filters: QueryFilters): boolean {
  if (file.kind !== tableOf(filters)) return false;
  if (filters.instrument && file.instrument !== filters.instrument) return false;
  if (filters.dataLevel && (file.kind !== 'science' || file.dataLevel !== filters.dataLevel)) return false;
  if (filters.descriptor && file.descriptor !== filters.descriptor) return false;
  if (filters.startDate && file.startDate < filters.startDate) return false;
  if (filters.endDate && file.startDate > filters.endDate) return false;
  if (filters.version && filters.version !== 'latest' && file.version !== filters.version) return false;
  if (filters.extension && file.extension !== filters.extension) return false;
  if (filters.filePath && file.path !== filters.filePath) return false;
  return true;
}

/**
 * The folders below the data root (as path segments) that can hold files the filters select: the scan of a
 * data root reads these and nothing beside them.
 */
export function scopeFolders(filters: QueryFilters): string[][] {
  if (tableOf(filters) === 'ancillary') {
    return [[MISSION, ANCILLARY_FOLDER, ...(filters.instrument ? [filters.instrument] : [])]];
  }
  if (!filters.instrument) return [[MISSION]];
  return [[MISSION, filters.instrument, ...(filters.dataLevel ? [filters.dataLevel] : [])]];
}

/**
 * True when a folder of a science tree (`imap/<instrument>/<level>/<YYYY>[/<MM>]`, as segments) can hold files
 * starting in the filters' date range; folders of other names are read, so misplaced files are found.
 */
export function folderInRange(segments: readonly string[], filters: QueryFilters): boolean {
  if (segments[1] === ANCILLARY_FOLDER || segments.length < 4) return true;
  const year = segments[3] as string;
  const month = segments[4];
  if (!/^\d{4}$/.test(year) || (month !== undefined && !/^\d{2}$/.test(month))) return true;
  const first = month === undefined ? `${year}0101` : `${year}${month}01`;
  const last = month === undefined ? `${year}1231` : `${year}${month}31`;
  if (filters.startDate && last < filters.startDate) return false;
  if (filters.endDate && first > filters.endDate) return false;
  return true;
}
