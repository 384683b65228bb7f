/** The mission profile: the words and sets every name, path and query is checked against. */

/** The mission word, first part of every file name and path. */
export const MISSION = 'imap';

/** Instruments, in the order the service lists them in its messages. */
export const INSTRUMENTS = [
  'ultra-45',
  'codice',
  'glows',
  'hit',
  'lo',
  'mag',
  'swe',
  'hi-45',
  'idex',
  'ultra-90',
  'hi-90',
  'swapi',
] as const;

/** Data levels, lowest first. */
export const DATA_LEVELS = ['l0', 'l1', 'l1a', 'l1b', 'l1c', 'l1d', 'l2'] as const;

/** Extensions of science files: `pkts` at level l0, `cdf` above. */
export const SCIENCE_EXTENSIONS = ['pkts', 'cdf'] as const;

/** Extensions allowed for ancillary files. */
export const ANCILLARY_EXTENSIONS = ['cdf', 'csv', 'dat', 'json', 'zip', 'tsv', 'pgm', 'xlsx'] as const;

/** The folder below the mission folder that holds ancillary files. */
export const ANCILLARY_FOLDER = 'ancillary';

export type Instrument = (typeof INSTRUMENTS)[number];
export type DataLevel = (typeof DATA_LEVELS)[number];
export type ScienceExtension = (typeof SCIENCE_EXTENSIONS)[number];
export type AncillaryExtension = (typeof ANCILLARY_EXTENSIONS)[number];

/** The one extension a science file of this data level may have. */
export function scienceExtensionFor(level: DataLevel): ScienceExtension {
  return level === 'l0' ? 'pkts' : 'cdf';
}

/** True when `value` is a known instrument. */
export function isInstrument(value: string): value is Instrument {
  return (INSTRUMENTS as readonly string[]).includes(value);
}

/** True when `value` is a known data level. */
export function isDataLevel(value: string): value is DataLevel {
  return (DATA_LEVELS as readonly string[]).includes(value);
}

/**
 * True when `value` has the shape of a data level (`l`, a digit, perhaps a letter), known or not. Such a
 * third name part marks a science name, so ancillary descriptors cannot take this shape.
 */
export function looksLikeDataLevel(value: string): boolean {
  return /^l\d[a-z]?$/.test(value);
}
