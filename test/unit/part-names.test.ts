/** The names of a download's part files beside their destination, as every run reads and writes them. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPartName, partPath, partPidOf, recordPath } from '../../src/data-root/part-names.js';
import { STATE_FOLDER, stateFolder } from '../../src/data-root/state-folder.js';

const DESTINATION = join('/data', 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf');
const NAME = 'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';

describe('part names', () => {
  it('puts the part and its record beside the destination, named by the writing process', () => {
    expect(partPath(DESTINATION, 4242)).toBe(`${DESTINATION}.part.4242`);
    expect(recordPath(partPath(DESTINATION, 4242))).toBe(`${DESTINATION}.part.4242.json`);
  });

  it('tells parts and records from other names, and reads the pid of a part of one destination', () => {
    expect([`${NAME}.part.7`, `${NAME}.part.7.json`].every(isPartName)).toBe(true);
    expect([NAME, `${NAME}.part.7.json.tmp`, `${NAME}.part.x`, `${NAME}.partial`].some(isPartName)).toBe(
      false,
    );
    expect(partPidOf(DESTINATION, `${NAME}.part.7`)).toBe(7);
    expect(partPidOf(DESTINATION, `${NAME}.part.7.json`)).toBeUndefined();
    expect(partPidOf(DESTINATION, `other.cdf.part.7`)).toBeUndefined();
  });

  it('keeps the state in the hidden .mission-data folder of the root', () => {
    expect(STATE_FOLDER).toBe('.mission-data');
    expect(stateFolder('/data')).toBe(join('/data', '.mission-data'));
  });
});
