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

/**
 * Instruments of today's archive (ARCHIVE-TODAY §1.1): `hi` and `ultra` without their sensor angle, and the
 * spacecraft's own products. A vocabulary of its own, never merged with the specification's: `hi-45` is a
 * word of the first generation only, `hi` of today's only.
 */
export const TODAY_INSTRUMENTS = [
  'codice',
  'glows',
  'hi',
  'hit',
  'ialirt',
  'idex',
  'l1const',
  'lo',
  'mag',
  'spacecraft',
  'swapi',
  'swe',
  'ultra',
] as const;

/** Data levels of today's archive, lowest first. */
export const TODAY_DATA_LEVELS = [
  'l0',
  'l1',
  'l1a',
  'l1b',
  'l1c',
  'l1ca',
  'l1cb',
  'l1d',
  'l2',
  'l2a',
  'l2b',
  'l2c',
  'l3',
  'l3a',
  'l3b',
  'l3c',
  'l3d',
  'l3e',
] as const;

/** Every instrument of either generation, for query filters (the service holds files of both). */
export const ANY_INSTRUMENTS: readonly string[] = [
  ...new Set<string>([...INSTRUMENTS, ...TODAY_INSTRUMENTS]),
];
/** Every data level of either generation, lowest first. */
export const ANY_DATA_LEVELS: readonly string[] = TODAY_DATA_LEVELS;

/** Extensions of science files: `pkts` at level l0, `cdf` above. */
export const SCIENCE_EXTENSIONS = ['pkts', 'cdf'] as const;

/** Extensions allowed for ancillary files. */
export const ANCILLARY_EXTENSIONS = ['cdf', 'csv', 'dat', 'json', 'zip', 'tsv', 'pgm', 'xlsx'] as const;

/** The folder below the mission folder that holds ancillary files. */
export const ANCILLARY_FOLDER = 'ancillary';

/** An instrument of either generation. */
export type Instrument = (typeof INSTRUMENTS)[number] | (typeof TODAY_INSTRUMENTS)[number];
/** A data level of either generation. */
export type DataLevel = (typeof DATA_LEVELS)[number] | (typeof TODAY_DATA_LEVELS)[number];
/** An instrument of the specification's vocabulary. */
export type SpecInstrument = (typeof INSTRUMENTS)[number];
/** A data level of the specification's vocabulary. */
export type SpecDataLevel = (typeof DATA_LEVELS)[number];
export type ScienceExtension = (typeof SCIENCE_EXTENSIONS)[number];
export type AncillaryExtension = (typeof ANCILLARY_EXTENSIONS)[number];

/** The one extension a science file of this data level may have. */
export function scienceExtensionFor(level: SpecDataLevel): ScienceExtension {
  return level === 'l0' ? 'pkts' : 'cdf';
}

/** True when `value` is an instrument of either generation. */
export function isInstrument(value: string): value is Instrument {
  return ANY_INSTRUMENTS.includes(value);
}

/** True when `value` is a data level of either generation. */
export function isDataLevel(value: string): value is DataLevel {
  return ANY_DATA_LEVELS.includes(value);
}

/**
 * True when `value` has the shape of a data level (`l`, a digit, perhaps a letter), known or not. Such a
 * third name part marks a science name, so ancillary descriptors cannot take this shape.
 */
export function looksLikeDataLevel(value: string): boolean {
  return /^l\d[a-z]?$/.test(value);
}
