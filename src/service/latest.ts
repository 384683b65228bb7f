/**
 * `latest` resolved by the client, where the service is not asked for it: today's service keeps no `latest` for
 * its ancillary table, so its client asks for every version and keeps the newest of each file (ARCHIVE-TODAY §2).
 */
import { ValidationError } from '../core/errors.js';
import { type AncillaryFile, parsePath } from '../naming/names.js';
import { compareVersions } from '../naming/versions.js';
import type { ReceivedRecord } from './records.js';

/** The ancillary file a record's storage path names, or undefined for any other (or a newer form's). */
function ancillaryFile(path: string): AncillaryFile | undefined {
  try {
    const file = parsePath(path);
    return file.kind === 'ancillary' ? file : undefined;
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}

/**
 * The records with only the newest version of each ancillary file: one per (instrument, descriptor, start date),
 * the greatest version by `compareVersions` (every `vXX-YY` before today's `vNNN`). The key and version are read
 * from the storage path's name, which the records' own fields repeat. Records of other kinds, and of newer forms,
 * are kept as they are; the order of the records kept is the answer's.
 */
export function latestAncillary(records: readonly ReceivedRecord[]): ReceivedRecord[] {
  const newest = new Map<string, { index: number; version: string }>();
  const dropped = new Set<number>();
  records.forEach((record, index) => {
    const file = ancillaryFile(record.file_path);
    if (!file) return;
    const key = JSON.stringify([file.instrument, file.descriptor, file.startDate]);
    const held = newest.get(key);
    if (held === undefined || compareVersions(file.version, held.version) > 0) {
      if (held !== undefined) dropped.add(held.index);
      newest.set(key, { index, version: file.version });
    } else {
      dropped.add(index);
    }
  });
  return records.filter((_record, index) => !dropped.has(index));
}
