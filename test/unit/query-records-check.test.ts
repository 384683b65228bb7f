/**
 * The check of a query answer's records (`checkQueryAnswer`): the file each record's storage path names comes with
 * it, at the record's index, as the naming rules read it (so its callers need not read the path again); and each
 * field a record's kind carries is checked for its type, a wrong one refused with the field named, whichever way
 * the check takes.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/core/errors.js';
import { locateFile } from '../../src/naming/layout.js';
import { schemas } from '../../src/service/record-schemas.js';
import { checkQueryAnswer } from '../../src/service/records.js';
import { MAG_RECORD, REPOINTED_RECORD } from '../helpers/records.js';

const SPEC_SCIENCE = { ...MAG_RECORD, ingestion_date: '2025-01-02 03:04:05' };

const TODAY_SCIENCE = REPOINTED_RECORD;

const ANCILLARY = {
  file_path: 'imap/ancillary/mag/imap_mag_calibration_20250101_v001.json',
  instrument: 'mag',
  descriptor: 'calibration',
  start_date: '20250101',
  end_date: null,
  version: 'v001',
  extension: 'json',
};

const NEWER_FORM = { file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250101_v9.9.9.9.cdf' };

const SPICE_WITHOUT_PATH = {
  file_name: 'imap_pred_od004_20251002_20251113_v01.bsp',
  kernel_type: 'ephemeris_predicted',
  min_date_datetime: '2025-10-02T00:00:00',
  max_date_datetime: '2025-11-13T23:59:59',
  version: 1,
};

function refusal(record: unknown): string {
  try {
    checkQueryAnswer([record], 'GET /query', schemas);
  } catch (error) {
    if (error instanceof ProtocolError) return error.message;
    throw error;
  }
  return 'accepted';
}

describe('checkQueryAnswer', () => {
  it("gives each record's file at its index, read from its storage path", () => {
    const records = [SPEC_SCIENCE, NEWER_FORM, TODAY_SCIENCE, ANCILLARY];
    const answer = checkQueryAnswer(records, 'GET /query', schemas);
    expect(answer.records).toEqual(records);
    expect(answer.files).toEqual(records.map((record) => locateFile(record.file_path)));
    expect(answer.files.map((file) => file.kind)).toEqual(['science', 'unchecked', 'science', 'ancillary']);
    expect(answer.newerForms).toBe(1);
  });

  it('gives a SPICE record named by its file name alone the file of that name, at the path it is given', () => {
    const answer = checkQueryAnswer([SPICE_WITHOUT_PATH], 'GET /spice-query', schemas, 0, 'spice');
    const path = answer.records[0]?.file_path;
    expect(path).toBe('imap/spice/spk/imap_pred_od004_20251002_20251113_v01.bsp');
    expect(answer.files).toEqual([locateFile(path as string)]);
  });

  it.each([
    ['spec', SPEC_SCIENCE, 'end_date', null],
    ['spec', SPEC_SCIENCE, 'end_date', undefined],
    ['spec', SPEC_SCIENCE, 'ingestion_date', undefined],
    ['spec', SPEC_SCIENCE, 'data_level', undefined],
    ['today', TODAY_SCIENCE, 'repointing', null],
    ['today', TODAY_SCIENCE, 'repointing', undefined],
    ['today', TODAY_SCIENCE, 'minor_version', 0],
    ['ancillary', ANCILLARY, 'end_date', '20250102'],
  ])('accepts a %s record whose %s is %j', (_kind, record, field, value) => {
    expect(refusal({ ...record, [field]: value })).toBe('accepted');
  });

  it.each([
    ['spec', SPEC_SCIENCE, 'instrument', 7],
    ['spec', SPEC_SCIENCE, 'instrument', null],
    ['spec', SPEC_SCIENCE, 'descriptor', undefined],
    ['spec', SPEC_SCIENCE, 'start_date', 20250101],
    ['spec', SPEC_SCIENCE, 'end_date', 20250101],
    ['spec', SPEC_SCIENCE, 'version', ['v01-00']],
    ['spec', SPEC_SCIENCE, 'extension', { name: 'cdf' }],
    ['spec', SPEC_SCIENCE, 'ingestion_date', null],
    ['spec', SPEC_SCIENCE, 'data_level', false],
    ['today', TODAY_SCIENCE, 'data_level', undefined],
    ['today', TODAY_SCIENCE, 'repointing', '12'],
    ['today', TODAY_SCIENCE, 'repointing', 1.5],
    ['today', TODAY_SCIENCE, 'cr', true],
    ['today', TODAY_SCIENCE, 'major_version', '2'],
    ['ancillary', ANCILLARY, 'start_date', null],
  ])('refuses a %s record whose %s is %j, naming the field', (_kind, record, field, value) => {
    const message = refusal({ ...record, [field]: value });
    expect(message).toMatch(new RegExp(`^GET /query: record 1 is not a file record \\(field ${field}: `));
  });
});
