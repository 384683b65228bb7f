/**
 * Files grouped as the archive's `latest` groups them: by product and the day a file starts (for today's science,
 * the day and its repointing or Carrington rotation); within a group the highest version (`compareVersions`) is
 * the latest. A SPICE kernel's group is its series (`spiceSeries`): its versions are those of one name.
 */
import { ValidationError } from '../core/errors.js';
import { isProductFile, type MissionFile } from '../naming/file-types.js';
import { locateFile } from '../naming/layout.js';
import { spiceSeries } from '../naming/spice.js';
import { compareVersions } from '../naming/versions.js';

/**
 * The product of a file, as a key: kind, instrument, data level (science, quicklook and dependency files) and
 * descriptor; a SPICE kernel's type. Both generations of one product share it: a spec `v01-00` and a today's
 * `v001.0001` of one instrument, level, descriptor and start day are versions of one another.
 */
export function productKey(file: MissionFile): string {
  if (file.kind === 'spice') return `spice|${file.kernelType}`;
  const level = isProductFile(file) ? file.dataLevel : '';
  return [file.kind, file.instrument, level, file.descriptor].join('|');
}

/**
 * The day (or, for today's science, the repointing or rotation) of a file within its product: `20250105`,
 * `20250105-repoint00042`, `20250105-cr02291`; a SPICE kernel's series. Different repointings of a day are
 * different products' days: neither supersedes the other.
 */
export function dayOf(file: MissionFile): string {
  if (file.kind === 'spice') return spiceSeries(file);
  if (!isProductFile(file)) return file.startDate;
  if (file.repointing !== undefined) return `${file.startDate}-repoint${pad5(file.repointing)}`;
  if (file.cr !== undefined) return `${file.startDate}-cr${pad5(file.cr)}`;
  return file.startDate;
}

const pad5 = (value: number) => String(value).padStart(5, '0');

/**
 * The product and start day of a file, as a key: the files of one key are versions of one another. `productKey`
 * and `dayOf` joined by `|`, made by one `join`: a flat string, where concatenating the two (a string of strings,
 * in V8) kept more than twice its bytes for each of the 100,000 files a comparison holds.
 */
export function dayKey(file: MissionFile): string {
  if (file.kind === 'spice') return ['spice', file.kernelType, spiceSeries(file)].join('|');
  const level = isProductFile(file) ? file.dataLevel : '';
  return [file.kind, file.instrument, level, file.descriptor, dayOf(file)].join('|');
}

/**
 * The storage path a query record names: its `file_path`, or (a SPICE record of today's service, which names
 * the kernel by `file_name` alone) the path its name gives it.
 */
export function recordPath(record: {
  file_path?: string | null | undefined;
  file_name?: string | null | undefined;
}): string | undefined {
  if (typeof record.file_path === 'string') return record.file_path;
  if (typeof record.file_name !== 'string') return undefined;
  try {
    return locateFile(record.file_name).path;
  } catch (error) {
    // A name the rules do not read places no file: it is left out, as a path of a newer form would be unread.
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}

/** The storage paths of query records (see `recordPath`); a record that names no file is left out. */
export function recordPaths(
  records: Iterable<{ file_path?: string | null | undefined; file_name?: string | null | undefined }>,
): string[] {
  const paths: string[] = [];
  for (const record of records) {
    const path = recordPath(record);
    if (path !== undefined) paths.push(path);
  }
  return paths;
}

/** The highest version of each day key among `files`. */
export function latestByDay(files: Iterable<MissionFile>): Map<string, MissionFile> {
  const latest = new Map<string, MissionFile>();
  for (const file of files) {
    const key = dayKey(file);
    const held = latest.get(key);
    if (!held || compareVersions(file.version, held.version) > 0) latest.set(key, file);
  }
  return latest;
}

/** Orders files (or anything with a `path`) by path. */
export function byPath<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
