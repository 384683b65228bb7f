/**
 * `latest` resolved by the client, where the service is not asked for it: today's service keeps no `latest` for
 * its ancillary table, so its client asks for every version and keeps the newest of each file (ARCHIVE-TODAY §2).
 */
import { compareVersions } from '../naming/versions.js';
import type { QueryPage } from './records.js';

/**
 * The records with only the newest version of each ancillary file: one per (instrument, descriptor, start date),
 * the greatest version by `compareVersions` (every `vXX-YY` before today's `vNNN`). The key and version are those
 * of the file the storage path names (as the check read it), which the records' own fields repeat. Records of
 * other kinds, and of newer forms, are kept as they are; the order of the records kept is the answer's, each
 * with its file.
 */
export function latestAncillary(page: QueryPage): QueryPage {
  const newest = new Map<string, { index: number; version: string }>();
  const dropped = new Set<number>();
  page.files.forEach((file, index) => {
    if (file.kind !== 'ancillary') return;
    const key = JSON.stringify([file.instrument, file.descriptor, file.startDate]);
    const held = newest.get(key);
    if (held === undefined || compareVersions(file.version, held.version) > 0) {
      if (held !== undefined) dropped.add(held.index);
      newest.set(key, { index, version: file.version });
    } else {
      dropped.add(index);
    }
  });
  const kept = (_item: unknown, index: number) => !dropped.has(index);
  return { records: page.records.filter(kept), files: page.files.filter(kept) };
}
