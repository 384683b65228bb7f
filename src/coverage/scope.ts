/**
 * Which files a set of query filters covers, told from a file's name alone: the same filters select files of
 * the archive (through the service) and of the data root (here), so both sides of a comparison are one scope.
 */
import { ValidationError } from '../core/errors.js';
import type { MissionFile, SpiceFile } from '../naming/file-types.js';
import { isProductFile } from '../naming/file-types.js';
import { TODAY_GRAMMARS } from '../naming/grammars.js';
import { ANCILLARY_FOLDER, MISSION } from '../naming/mission.js';
import { type QueryFilters, type QueryTable, repointingNumber } from '../naming/query-vocabulary.js';
import { isSpiceKernelType, SPICE_KERNEL_TYPES } from '../naming/spice.js';
import { parseVersion } from '../naming/versions.js';

/** The filters a name cannot answer: the ingestion day is the archive's, not the file's. */
const ARCHIVE_ONLY_FILTERS = ['ingestionStartDate', 'ingestionEndDate'] as const;

/**
 * The folders below `imap/` that hold files of a kind of their own (`ancillary`, `spice`, `quicklook`,
 * `dependency`, `release`), from the grammars' layouts: a science tree's instrument folder is never one of them.
 */
export const KIND_FOLDERS: readonly string[] = TODAY_GRAMMARS.flatMap((grammar) => {
  const role = grammar.folders[1];
  return typeof role === 'object' ? [role.under] : [];
});

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

/** The table the filters search (`science` unless another is given). */
export function tableOf(filters: QueryFilters): QueryTable {
  return filters.table ?? 'science';
}

/** The kind of file a coverage calendar of the filters shows: ancillary files for that table, else science. */
export function calendarTable(filters: QueryFilters): 'science' | 'ancillary' {
  return filters.table === 'ancillary' ? 'ancillary' : 'science';
}

/**
 * True when the filters select `file` (a `version` of `latest` selects every version: which one is latest is
 * decided against the archive). A table lists files of its kind, of both generations.
 */
export function matchesFilters(file: MissionFile, filters: QueryFilters): boolean {
  if (file.kind !== tableOf(filters)) return false;
  if (filters.version && filters.version !== 'latest' && file.version !== filters.version) return false;
  if (filters.extension && file.extension !== filters.extension) return false;
  if (filters.filePath && file.path !== filters.filePath) return false;
  if (file.kind === 'spice') return matchesKernel(file, filters);
  if (filters.instrument && file.instrument !== filters.instrument) return false;
  if (filters.dataLevel && (!isProductFile(file) || file.dataLevel !== filters.dataLevel)) return false;
  if (filters.descriptor && file.descriptor !== filters.descriptor) return false;
  if (filters.startDate && file.startDate < filters.startDate) return false;
  if (filters.endDate && file.startDate > filters.endDate) return false;
  return matchesTodayFilters(file, filters);
}

/** Today's filters (repointing, major and minor version): a file whose name lacks the part is not selected. */
function matchesTodayFilters(file: MissionFile, filters: QueryFilters): boolean {
  if (filters.repointing !== undefined && filters.repointing !== '') {
    const wanted = repointingNumber(filters.repointing);
    if (!isProductFile(file) || file.repointing === undefined || file.repointing !== wanted) return false;
  }
  const version = parseVersion(file.version);
  const today = version?.form === 'major-minor' || version?.form === 'minor-only';
  if (filters.majorVersion !== undefined && filters.majorVersion !== '') {
    if (!today || version.major === undefined || version.major !== Number(filters.majorVersion)) return false;
  }
  if (filters.minorVersion !== undefined && filters.minorVersion !== '') {
    if (!today || version.minor !== Number(filters.minorVersion)) return false;
  }
  return true;
}

/** A kernel against the SPICE filters: its type, and its coverage overlapping the dates (one without dates does). */
function matchesKernel(file: SpiceFile, filters: QueryFilters): boolean {
  if (filters.kernelType && file.kernelType !== filters.kernelType) return false;
  if (filters.startDate && file.endDate !== undefined && file.endDate < filters.startDate) return false;
  if (filters.endDate && file.startDate !== undefined && file.startDate > filters.endDate) return false;
  return true;
}

/**
 * The folders below the data root (as path segments) that can hold files the filters select: the scan of a
 * data root reads these and nothing beside them.
 */
export function scopeFolders(filters: QueryFilters): string[][] {
  const table = tableOf(filters);
  if (table === 'ancillary') {
    return [[MISSION, ANCILLARY_FOLDER, ...(filters.instrument ? [filters.instrument] : [])]];
  }
  if (table === 'spice') {
    const type = filters.kernelType;
    return [[MISSION, 'spice', ...(type && isSpiceKernelType(type) ? [SPICE_KERNEL_TYPES[type]] : [])]];
  }
  if (!filters.instrument) return [[MISSION]];
  return [[MISSION, filters.instrument, ...(filters.dataLevel ? [filters.dataLevel] : [])]];
}

/**
 * True when a folder of a science tree (`imap/<instrument>/<level>/<YYYY>[/<MM>]`, as segments) can hold files
 * starting in the filters' date range; folders of other names are read, so misplaced files are found.
 */
export function folderInRange(segments: readonly string[], filters: QueryFilters): boolean {
  if (KIND_FOLDERS.includes(segments[1] as string) || segments.length < 4) return true;
  const year = segments[3] as string;
  const month = segments[4];
  if (!/^\d{4}$/.test(year) || (month !== undefined && !/^\d{2}$/.test(month))) return true;
  const first = month === undefined ? `${year}0101` : `${year}${month}01`;
  const last = month === undefined ? `${year}1231` : `${year}${month}31`;
  if (filters.startDate && last < filters.startDate) return false;
  if (filters.endDate && first > filters.endDate) return false;
  return true;
}
