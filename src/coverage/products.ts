/**
 * Files grouped as the archive's `latest` groups them: by product (instrument, data level, descriptor) and the
 * day a file starts; within a group the highest version is the latest.
 */
import { locateFile } from '../naming/layout.js';
import { compareVersions } from '../naming/versions.js';
import type { MissionFile } from '../naming/names.js';

/** The product of a file, as a key. */
export function productKey(file: MissionFile): string {
  return [file.kind, file.instrument, file.kind === 'science' ? file.dataLevel : '', file.descriptor].join(
    '|',
  );
}

/** The product and start day of a file, as a key: the files of one key are versions of one another. */
export function dayKey(file: MissionFile): string {
  return `${productKey(file)}|${file.startDate}`;
}

/** The mission files among storage paths; paths of a naming form this version does not read are left out. */
export function missionFiles(paths: Iterable<string>): MissionFile[] {
  const files: MissionFile[] = [];
  for (const path of paths) {
    const located = locateFile(path);
    if (located.kind !== 'unchecked') files.push(located);
  }
  return files;
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
