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
