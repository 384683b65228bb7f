/**
 * Values from fixed lists and dates: the client suggests what a mistyped or wrongly cased value meant, and
 * calls an impossible date that, while the reference server keeps the service's own words.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { closestChoices, didYouMean, editDistance } from '../../src/naming/did-you-mean.js';
import { ANY_DATA_LEVELS, ANY_INSTRUMENTS, DATA_LEVELS, INSTRUMENTS } from '../../src/naming/mission.js';
import { calendarDateProblem, messages, namePartHint } from '../../src/naming/name-parts.js';
import { parseName } from '../../src/naming/names.js';
import { clientValueProblem, queryValueProblem, toQueryParams } from '../../src/naming/query-params.js';

function validationError(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('didYouMean', () => {
  it.each([
    ['magg', INSTRUMENTS, 'Did you mean mag?'],
    ['swapy', INSTRUMENTS, 'Did you mean swapi?'],
    ['codcie', INSTRUMENTS, 'Did you mean codice?'],
    ['hi45', INSTRUMENTS, 'Did you mean hi-45?'],
    ['ultra', INSTRUMENTS, 'Did you mean ultra-45 or ultra-90?'],
    ['hi', INSTRUMENTS, 'Did you mean hi-45, hi-90 or hit?'],
    ['sw', INSTRUMENTS, 'Did you mean swapi or swe?'],
    ['MAG', INSTRUMENTS, 'Values are written in lower case: did you mean mag?'],
    ['L1A', DATA_LEVELS, 'Values are written in lower case: did you mean l1a?'],
  ])('%s among %s: %s', (value, choices, expected) => {
    expect(didYouMean(value, choices)).toBe(expected);
  });

  it('names the kind of value in a case hint', () => {
    expect(didYouMean('Mag', INSTRUMENTS, 'instruments')).toBe(
      'Instruments are written in lower case: did you mean mag?',
    );
  });

  it('suggests nothing for a far value, a valid one, or too many equally close ones', () => {
    expect(didYouMean('xyz', INSTRUMENTS)).toBeUndefined();
    expect(didYouMean('jupiter', INSTRUMENTS)).toBeUndefined();
    expect(didYouMean('mag', INSTRUMENTS)).toBeUndefined();
    expect(closestChoices('l1x', DATA_LEVELS)).toEqual(['l1', 'l1a', 'l1b', 'l1c', 'l1d']);
    expect(didYouMean('l1x', DATA_LEVELS)).toBeUndefined();
  });

  it('counts a swap of two neighbours as one slip', () => {
    expect(editDistance('mga', 'mag')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});

describe('calendarDateProblem', () => {
  it.each([
    ['20250230', '20250230 is not a date of the calendar (February has 28 days in 2025)'],
    ['20240230', '20240230 is not a date of the calendar (February has 29 days in 2024)'],
    ['19000229', '19000229 is not a date of the calendar (February has 28 days in 1900)'],
    ['20250431', '20250431 is not a date of the calendar (April has 30 days)'],
    ['20251301', '20251301 is not a date of the calendar (there is no month 13)'],
    ['20250001', '20250001 is not a date of the calendar (there is no month 00)'],
    ['20250100', '20250100 is not a date of the calendar (there is no day 00)'],
    ['00000101', '00000101 is not a date of the calendar (there is no year 0000)'],
  ])('%s', (value, expected) => {
    expect(calendarDateProblem(value)).toBe(expected);
  });

  it('leaves real dates, and values of the wrong form, to other messages', () => {
    expect(calendarDateProblem('20240229')).toBeUndefined();
    expect(calendarDateProblem('20250101')).toBeUndefined();
    expect(calendarDateProblem('2025-01-01')).toBeUndefined();
    expect(calendarDateProblem('202501')).toBeUndefined();
  });
});

/** The client's message for an instrument of neither generation: it lists both generations' words. */
const ANY_INSTRUMENT_MESSAGE = `Invalid instrument. Please choose from ${ANY_INSTRUMENTS.join(', ')}`;

describe('query values as the client reports them', () => {
  it('adds a did-you-mean or case hint to the service message of each listed filter', () => {
    const error = validationError(() =>
      toQueryParams({ instrument: 'MAG', dataLevel: 'l1aa', extension: 'cfd' }),
    );
    // The client takes the words of both generations, and lists them all.
    expect(error.problems).toEqual([
      `${ANY_INSTRUMENT_MESSAGE}. Instruments are written in lower case: did you mean mag?`,
      `Invalid data level. Please choose from ${ANY_DATA_LEVELS.join(', ')}. Did you mean l1a or l1ca?`,
      'Invalid extension "cfd". Please choose from pkts, cdf. Did you mean cdf?',
    ]);
    expect(clientValueProblem('instrument', 'magg')).toBe(`${ANY_INSTRUMENT_MESSAGE}. Did you mean mag?`);
    expect(clientValueProblem('table', 'Science')).toBe(
      'Invalid table "Science". Please choose from science, ancillary, spice. Tables are written in lower case: did you mean science?',
    );
    expect(clientValueProblem('extension', 'jsn', 'ancillary')).toMatch(/\. Did you mean json\?$/);
  });

  it('calls an impossible date that, but keeps the form message for a wrong form', () => {
    const error = validationError(() =>
      toQueryParams({ instrument: 'mag', startDate: '20250230', endDate: '2025-03-01' }),
    );
    expect(error.problems).toEqual([
      'Invalid start_date "20250230": 20250230 is not a date of the calendar (February has 28 days in 2025).',
      'Invalid end_date "2025-03-01". Please use YYYYMMDD format.',
    ]);
  });

  it('leaves a far value with the service message alone', () => {
    expect(clientValueProblem('instrument', 'jupiter')).toBe(ANY_INSTRUMENT_MESSAGE);
  });

  it("keeps the service's own words for the reference server", () => {
    expect(queryValueProblem('instrument', 'MAG', 'science', 'spec')).toBe(messages.instrument);
    expect(queryValueProblem('instrument', 'hi', 'science', 'spec')).toBe(messages.instrument);
    expect(queryValueProblem('instrument', 'hi')).toBeUndefined();
    expect(queryValueProblem('end_date', '20250230')).toBe(
      'Invalid end_date "20250230". Please use YYYYMMDD format.',
    );
    expect(queryValueProblem('table', 'sience')).toBe(
      'Invalid table "sience". Please choose from science, ancillary, spice',
    );
  });
});

describe('names inside file names', () => {
  it("keeps the service's messages and adds the suggestion as the hint", () => {
    const error = validationError(() => parseName('imap_MAG_l1a_norm_20250101_20250101_v01-00.cdf'));
    expect(error.problems).toEqual([messages.instrument]);
    expect(error.hint).toBe(
      '"MAG" is not an instrument. Instruments are written in lower case: did you mean mag?',
    );
  });

  it('suggests levels and extensions, and says why a date is impossible', () => {
    const error = validationError(() => parseName('imap_magg_L1A_norm_20250230_20250301_v01-00.cdf'));
    expect(error.problems).toEqual([messages.instrument, messages.dataLevel, messages.startDate]);
    expect(error.hint).toBe(
      [
        '"magg" is not an instrument. Did you mean mag?',
        '"L1A" is not a data level. Data levels are written in lower case: did you mean l1a?',
        '20250230 is not a date of the calendar (February has 28 days in 2025).',
      ].join(' '),
    );
  });

  it('suggests for ancillary names too', () => {
    const error = validationError(() => parseName('imap_swapy_calibration_20240101_v01-00.jsn'));
    expect(error.problems).toEqual([messages.instrument, messages.ancillaryExtension]);
    expect(error.hint).toBe(
      '"swapy" is not an instrument. Did you mean swapi? "jsn" is not an extension. Did you mean json?',
    );
  });

  it('gives no hint when there is nothing to suggest', () => {
    expect(
      validationError(() => parseName('imap_xyz_l1a_norm_20250101_20250101_v01-00.cdf')).hint,
    ).toBeUndefined();
    expect(namePartHint('date', '20250101')).toBeUndefined();
  });
});
