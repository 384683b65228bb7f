/** A query record as the service answers it, shared by the client tests that need one. */
import type { QueryRecord } from '../../src/naming/query-records.js';

export const MAG_RECORD: QueryRecord = {
  file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm-mago',
  start_date: '20250101',
  end_date: '20250101',
  version: 'v01-00',
  extension: 'cdf',
};

/** A record of today's naming: a repointing in place of the end date, and a version of two numbers. */
export const REPOINTED_RECORD: QueryRecord = {
  file_path: 'imap/hi/l1b/2025/01/imap_hi_l1b_45sensor-de_20250101-repoint00012_v002.0001.cdf',
  instrument: 'hi',
  data_level: 'l1b',
  descriptor: '45sensor-de',
  start_date: '20250101',
  repointing: 12,
  cr: null,
  version: 'v002.0001',
  major_version: 2,
  minor_version: 1,
  extension: 'cdf',
};

/** `count` records of one day, each of its own descriptor (`d00000`, `d00001`, …), in the order of their paths. */
export function manyRecords(count: number): QueryRecord[] {
  return Array.from({ length: count }, (_, at) => {
    const day = String(at).padStart(5, '0');
    const name = `imap_mag_l1a_d${day}_20250101_20250101_v01-00.cdf`;
    return {
      file_path: `imap/mag/l1a/2025/01/${name}`,
      instrument: 'mag',
      data_level: 'l1a',
      descriptor: `d${day}`,
      start_date: '20250101',
      end_date: '20250101',
      version: 'v01-00',
      extension: 'cdf',
    };
  });
}
