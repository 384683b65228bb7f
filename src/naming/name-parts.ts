/**
 * The rules of each part of a file name, and the messages that report them, worded as the service words them.
 * Plain functions without zod: the query vocabulary and the command line's option table use them at start-up.
 */

import { didYouMean } from './did-you-mean.js';
import { ANCILLARY_EXTENSIONS, DATA_LEVELS, INSTRUMENTS, MISSION } from './mission.js';

/** The version form `vXX-YY`. */
export const VERSION_FORM = /^v\d{2}-\d{2}$/;
/** Descriptors are free text, but a single name part: letters, digits and dashes. */
export const DESCRIPTOR_FORM = /^[A-Za-z0-9][A-Za-z0-9-]*$/;

/** The expected science file name pattern, as the service words it. */
export const SCIENCE_NAME_PATTERN =
  '<mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>';
/** The expected ancillary file name pattern. */
export const ANCILLARY_NAME_PATTERN =
  '<mission>_<instrument>_<descriptor>_<startdate>[_<enddate>]_<version>.<extension>';

/**
 * The longest file name the store and a local data root can hold: the file-system limit of 255 bytes, less
 * room for what a download keeps beside the file while it is in flight (`<name>.part.<pid>.json.tmp`: 22
 * bytes with the longest Linux pid, and two to spare).
 */
export const MAX_NAME_BYTES = 255 - 24;

/** Messages of the naming rules, worded as the service words them. */
export const messages = {
  filename: (name: string) => `Invalid filename ${name}. Expected pattern: ${SCIENCE_NAME_PATTERN}`,
  ancillaryFilename: (name: string) =>
    `Invalid ancillary filename ${name}. Expected pattern: ${ANCILLARY_NAME_PATTERN}`,
  mission: `Invalid mission. Please use ${MISSION}.`,
  instrument: `Invalid instrument. Please choose from ${INSTRUMENTS.join(', ')}`,
  dataLevel: `Invalid data level. Please choose from ${DATA_LEVELS.join(', ')}`,
  startDate: 'Invalid start date format. Please use YYYYMMDD format.',
  endDate: 'Invalid end date format. Please use YYYYMMDD format.',
  version: 'Invalid version format. Please use vxx-xx format.',
  extension:
    'Invalid extension. Extension should be pkts for data level l0 and cdf for data level higher than l0',
  ancillaryExtension: `Invalid extension. Ancillary files must have one of the extensions ${ANCILLARY_EXTENSIONS.join(', ')}`,
  tooLong: (name: string, bytes: number) =>
    `Invalid filename ${name.slice(0, 60)}…: it is ${bytes} bytes long; file names are at most ${MAX_NAME_BYTES} bytes.`,
} as const;

/**
 * True when `value` is `YYYYMMDD` and a real date of the Gregorian calendar (no Feb 30, no month 13, no day 00,
 * no year 0000, which the service's date parsing refuses too).
 */
export function isCalendarDate(value: string): boolean {
  // Read digit by digit rather than by a pattern's groups: every name read checks one or two dates, and the
  // strings a match makes were a fifth of what reading a name allocated.
  if (value.length !== 8) return false;
  let number = 0;
  for (let at = 0; at < 8; at += 1) {
    const digit = value.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) return false;
    number = number * 10 + digit;
  }
  const year = Math.floor(number / 10_000);
  const month = Math.floor(number / 100) % 100;
  const day = number % 100;
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/**
 * Why a value of the right form `YYYYMMDD` is still no date, e.g. "20250230 is not a date of the calendar
 * (February has 28 days in 2025)"; undefined when it is a date, or when its form is wrong (the form's own
 * message says that better).
 */
export function calendarDateProblem(value: string): string | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  if (!match || isCalendarDate(value)) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const why =
    year < 1
      ? 'there is no year 0000'
      : month < 1 || month > 12
        ? `there is no month ${match[2]}`
        : day < 1
          ? 'there is no day 00'
          : `${MONTH_NAMES[month - 1]} has ${daysInMonth(year, month)} days${month === 2 ? ` in ${match[1]}` : ''}`;
  return `${value} is not a date of the calendar (${why})`;
}

/** The parts of a name that have a fixed list of values. */
export type ListedNamePart = 'instrument' | 'data level' | 'extension';

const LISTED_VALUES: Record<ListedNamePart, { values: readonly string[]; plural: string; article: string }> =
  {
    instrument: { values: INSTRUMENTS, plural: 'instruments', article: 'an' },
    'data level': { values: DATA_LEVELS, plural: 'data levels', article: 'a' },
    extension: {
      values: [...new Set(['pkts', 'cdf', ...ANCILLARY_EXTENSIONS])],
      plural: 'extensions',
      article: 'an',
    },
  };

/**
 * The client's extra sentence about a bad name part, beside the service's message: a suggestion for a listed
 * part ('"MAG" is not an instrument. Instruments are written in lower case: did you mean mag?'), or why a
 * date is impossible; undefined when there is nothing to add.
 */
export function namePartHint(part: ListedNamePart | 'date', value: string): string | undefined {
  if (part === 'date') {
    const problem = calendarDateProblem(value);
    return problem ? `${problem}.` : undefined;
  }
  const { values, plural, article } = LISTED_VALUES[part];
  const suggestion = didYouMean(value, values, plural);
  return suggestion ? `${JSON.stringify(value)} is not ${article} ${part}. ${suggestion}` : undefined;
}

// Worked out rather than taken from `Date`, which maps years 0-99 to 1900-1999.
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** True when `value` is a descriptor: free text, but one name part (letters, digits and dashes). */
export function isDescriptor(value: string): boolean {
  return DESCRIPTOR_FORM.test(value);
}

/** True when `value` has the version form `vXX-YY`. */
export function isVersion(value: string): boolean {
  return VERSION_FORM.test(value);
}
