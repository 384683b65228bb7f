/** The one naming-rule validator: parses and checks science and ancillary file names and storage paths. */
import * as z from 'zod/mini';
import './schema.js';
import { ValidationError } from './errors.js';
import {
  ANCILLARY_EXTENSIONS,
  ANCILLARY_FOLDER,
  type AncillaryExtension,
  DATA_LEVELS,
  type DataLevel,
  INSTRUMENTS,
  type Instrument,
  looksLikeDataLevel,
  MISSION,
  SCIENCE_EXTENSIONS,
  type ScienceExtension,
  scienceExtensionFor,
} from './mission.js';

/** The expected science file name pattern, as the service words it. */
export const SCIENCE_NAME_PATTERN =
  '<mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>';
/** The expected ancillary file name pattern. */
export const ANCILLARY_NAME_PATTERN =
  '<mission>_<instrument>_<descriptor>_<startdate>[_<enddate>]_<version>.<extension>';

/**
 * The longest file name the store and a local data root can hold: the file-system limit of 255 bytes, less
 * room for the suffixes a download adds beside the file while it is in flight (`.part`, `.part.lock`, ...).
 */
export const MAX_NAME_BYTES = 255 - 16;

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

const instrumentSchema = z.enum(INSTRUMENTS);
const dataLevelSchema = z.enum(DATA_LEVELS);
const versionSchema = z.string().check(z.regex(/^v\d{2}-\d{2}$/));
const dateSchema = z.string().check(z.refine(isCalendarDate));
/** Descriptors are free text, but a single name part: letters, digits and dashes. */
const descriptorSchema = z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/));
const ancillaryExtensionSchema = z.enum(ANCILLARY_EXTENSIONS);

/** A parsed science file name. */
export interface ScienceFile {
  kind: 'science';
  mission: typeof MISSION;
  instrument: Instrument;
  dataLevel: DataLevel;
  descriptor: string;
  startDate: string;
  endDate: string;
  version: string;
  extension: ScienceExtension;
  /** The file name. */
  name: string;
  /** The storage path: `imap/<instrument>/<level>/<YYYY>/<MM>/<name>`. */
  path: string;
}

/** A parsed ancillary file name. */
export interface AncillaryFile {
  kind: 'ancillary';
  mission: typeof MISSION;
  instrument: Instrument;
  descriptor: string;
  startDate: string;
  /** Absent when the name carries a single date. */
  endDate: string | undefined;
  version: string;
  extension: AncillaryExtension;
  name: string;
  /** The storage path: `imap/ancillary/<instrument>/<name>`. */
  path: string;
}

/** A parsed file name of either kind. */
export type MissionFile = ScienceFile | AncillaryFile;

/**
 * True when `value` is `YYYYMMDD` and a real date of the Gregorian calendar (no Feb 30, no month 13, no day 00,
 * no year 0000, which the service's date parsing refuses too).
 */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

// Worked out rather than taken from `Date`, which maps years 0-99 to 1900-1999.
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** True when `value` has the version form `vXX-YY`. */
export function isVersion(value: string): boolean {
  return versionSchema.safeParse(value).success;
}

/** Orders versions `vXX-YY` numerically: negative when a < b, 0 when equal, positive when a > b. */
export function compareVersions(a: string, b: string): number {
  const [a1, a2] = versionNumbers(a);
  const [b1, b2] = versionNumbers(b);
  return a1 - b1 || a2 - b2;
}

function versionNumbers(version: string): [number, number] {
  const match = /^v(\d+)-(\d+)$/.exec(version);
  if (!match) throw new ValidationError([messages.version]);
  return [Number(match[1]), Number(match[2])];
}

/** Splits a name into its stem parts and extension; undefined when it has no extension. */
function splitName(name: string): { parts: string[]; extension: string } | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return undefined;
  return { parts: name.slice(0, dot).split('_'), extension: name.slice(dot + 1) };
}

/**
 * Parses a file name of either kind, checking every rule. A name with seven parts, or whose third part
 * looks like a data level (`l` and a digit, known or not), is read as a science name; a name of five or six
 * parts otherwise as an ancillary name.
 * Throws a `ValidationError` listing every broken rule.
 */
export function parseName(name: string): MissionFile {
  checkNameLength(name);
  const split = hasUnsafeCharacters(name) ? undefined : splitName(name);
  // `imap_mag_l3_norm_20240101_v01-00.cdf` is a science name missing a part, not an ancillary one whose
  // descriptor is "l3": reading it as science reports the expected pattern instead of a puzzling date error.
  if (
    split &&
    (split.parts.length === 5 || split.parts.length === 6) &&
    !looksLikeDataLevel(split.parts[2] ?? '')
  ) {
    return parseAncillary(name, split.parts, split.extension);
  }
  return parseScience(name, split);
}

/** Parses a science file name; throws a `ValidationError` listing every broken rule. */
export function parseScienceName(name: string): ScienceFile {
  checkNameLength(name);
  return parseScience(name, hasUnsafeCharacters(name) ? undefined : splitName(name));
}

/** A name longer than a file system keeps (with its in-flight suffixes) is refused before any other rule. */
function checkNameLength(name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) throw new ValidationError([messages.tooLong(name, bytes)]);
}

function parseScience(name: string, split: ReturnType<typeof splitName>): ScienceFile {
  const parts = split?.parts;
  if (!split || !parts || parts.length !== 7 || !parts.every((part) => part.length > 0)) {
    throw new ValidationError([messages.filename(name)]);
  }
  const [mission, instrument, level, descriptor, start, end, version] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!descriptorSchema.safeParse(descriptor).success) throw new ValidationError([messages.filename(name)]);
  const problems: string[] = [];
  if (mission !== MISSION) problems.push(messages.mission);
  const instrumentResult = instrumentSchema.safeParse(instrument);
  if (!instrumentResult.success) problems.push(messages.instrument);
  const levelResult = dataLevelSchema.safeParse(level);
  if (!levelResult.success) problems.push(messages.dataLevel);
  if (!dateSchema.safeParse(start).success) problems.push(messages.startDate);
  if (!dateSchema.safeParse(end).success) problems.push(messages.endDate);
  if (!versionSchema.safeParse(version).success) problems.push(messages.version);
  const extensionOk = levelResult.success
    ? split.extension === scienceExtensionFor(levelResult.data)
    : (SCIENCE_EXTENSIONS as readonly string[]).includes(split.extension);
  if (!extensionOk) problems.push(messages.extension);
  if (problems.length > 0 || !instrumentResult.success || !levelResult.success) {
    throw new ValidationError(problems);
  }
  return {
    kind: 'science',
    mission: MISSION,
    instrument: instrumentResult.data,
    dataLevel: levelResult.data,
    descriptor,
    startDate: start,
    endDate: end,
    version,
    extension: split.extension as ScienceExtension,
    name,
    path: [MISSION, instrument, level, start.slice(0, 4), start.slice(4, 6), name].join('/'),
  };
}

function parseAncillary(name: string, parts: string[], extension: string): AncillaryFile {
  if (!parts.every((part) => part.length > 0) || !descriptorSchema.safeParse(parts[2]).success) {
    throw new ValidationError([messages.ancillaryFilename(name)]);
  }
  const [mission, instrument, descriptor, start] = parts as [string, string, string, string];
  const end = parts.length === 6 ? parts[4] : undefined;
  const version = parts[parts.length - 1] as string;
  const problems: string[] = [];
  if (mission !== MISSION) problems.push(messages.mission);
  const instrumentResult = instrumentSchema.safeParse(instrument);
  if (!instrumentResult.success) problems.push(messages.instrument);
  if (!dateSchema.safeParse(start).success) problems.push(messages.startDate);
  if (end !== undefined && !dateSchema.safeParse(end).success) problems.push(messages.endDate);
  if (!versionSchema.safeParse(version).success) problems.push(messages.version);
  const extensionResult = ancillaryExtensionSchema.safeParse(extension);
  if (!extensionResult.success) problems.push(messages.ancillaryExtension);
  if (problems.length > 0 || !instrumentResult.success || !extensionResult.success) {
    throw new ValidationError(problems);
  }
  return {
    kind: 'ancillary',
    mission: MISSION,
    instrument: instrumentResult.data,
    descriptor,
    startDate: start,
    endDate: end,
    version,
    extension: extensionResult.data,
    name,
    path: [MISSION, ANCILLARY_FOLDER, instrument, name].join('/'),
  };
}

/** Builds the file name of a parsed record (the inverse of `parseName`). */
export function formatName(
  file: Omit<ScienceFile, 'name' | 'path'> | Omit<AncillaryFile, 'name' | 'path'>,
): string {
  const parts =
    file.kind === 'science'
      ? [
          file.mission,
          file.instrument,
          file.dataLevel,
          file.descriptor,
          file.startDate,
          file.endDate,
          file.version,
        ]
      : [file.mission, file.instrument, file.descriptor, file.startDate, file.endDate, file.version];
  return `${parts.filter((part) => part !== undefined).join('_')}.${file.extension}`;
}

// C0, DEL and C1: every character of Unicode's control category.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is rejected here
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

function hasUnsafeCharacters(value: string): boolean {
  return CONTROL_CHARACTERS.test(value) || /[\\/%]/.test(value);
}

/** What is wrong with a path, and what to do instead when that is not obvious. */
interface PathProblem {
  what: string;
  advice?: string;
}

/**
 * Returns what makes `path` unsafe to use as a storage path or a path below a local root, or undefined
 * when it is safe: absolute paths, `..`, `.`, empty segments, backslashes, NUL and control characters,
 * and percent-encoded forms of any of these.
 */
export function unsafePathReason(path: string): string | undefined {
  const problem = literalPathProblem(path) ?? percentPathProblem(path);
  if (!problem) return undefined;
  return problem.advice ? `${problem.what}; ${problem.advice}` : problem.what;
}

function literalPathProblem(path: string): PathProblem | undefined {
  if (path.length === 0) return { what: 'it is empty' };
  if (path.includes('\u0000')) return { what: 'it contains a NUL character' };
  if (CONTROL_CHARACTERS.test(path)) return { what: 'it contains a control character' };
  if (path.includes('\\'))
    return { what: "it contains a backslash ('\\')", advice: "use '/' between folders" };
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) {
    return { what: 'it is absolute', advice: 'give a path relative to the data root' };
  }
  const segments = path.split('/');
  if (segments.includes('..')) return { what: "it contains a '..' segment" };
  if (segments.includes('.')) return { what: "it contains a '.' segment" };
  if (segments.includes('')) return { what: "it contains an empty segment ('//' or a trailing '/')" };
  return undefined;
}

// Servers and file systems differ in how often they decode, so every layer of encoding is looked through.
function percentPathProblem(path: string): PathProblem | undefined {
  if (!path.includes('%')) return undefined;
  const decoded = decodeRepeatedly(path);
  if (decoded !== path) {
    const inner = literalPathProblem(decoded.replaceAll('%', ''));
    if (inner) return { ...inner, what: `${inner.what} once percent-decoded` };
    if (decoded.split('/').length !== path.split('/').length)
      return { what: "it contains a percent-encoded '/'" };
  }
  return { what: "it contains '%', which no file path of the store has" };
}

function decodeRepeatedly(value: string): string {
  let current = value;
  for (let round = 0; round < 3; round += 1) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/** Throws a `ValidationError` when `path` is unsafe (see `unsafePathReason`). */
export function assertSafeRelativePath(path: string, what = 'path'): void {
  const reason = unsafePathReason(path);
  if (reason) throw new ValidationError([`Invalid ${what} ${JSON.stringify(path)}: ${reason}.`]);
}

/**
 * Parses a storage path (`imap/<instrument>/<level>/<YYYY>/<MM>/<name>` or
 * `imap/ancillary/<instrument>/<name>`): the path must be safe, its name valid and its folders must agree
 * with the name. Throws a `ValidationError` saying what is wrong.
 */
export function parsePath(path: string): MissionFile {
  assertSafeRelativePath(path);
  const segments = path.split('/');
  const name = segments[segments.length - 1] as string;
  const file = parseName(name);
  if (file.path !== path) {
    const layout =
      file.kind === 'science'
        ? '<mission>/<instrument>/<data_level>/<year>/<month>/<filename>'
        : '<mission>/ancillary/<instrument>/<filename>';
    throw new ValidationError([
      `Invalid path ${path}: ${folderMismatch(segments, file)}; expected ${file.path} (${layout}).`,
    ]);
  }
  return file;
}

/** Says which folders of a path disagree with its file name. */
function folderMismatch(segments: readonly string[], file: MissionFile): string {
  const expected = file.path.split('/');
  if (segments.length !== expected.length) {
    const folders = (count: number) => `${count} folder${count === 1 ? '' : 's'}`;
    return `it has ${folders(segments.length - 1)} above the file name where ${folders(expected.length - 1)} belong`;
  }
  const describe: ReadonlyArray<(found: string, wanted: string) => string> =
    file.kind === 'science'
      ? [
          (found, wanted) => `the mission folder is ${found} but the name's mission is ${wanted}`,
          (found, wanted) => `the instrument folder is ${found} but the name's instrument is ${wanted}`,
          (found, wanted) => `the data level folder is ${found} but the name's data level is ${wanted}`,
          (found, wanted) => `the year folder is ${found} but the name's start date is in ${wanted}`,
          (found, wanted) => `the month folder is ${found} but the name's start date is in month ${wanted}`,
        ]
      : [
          (found, wanted) => `the mission folder is ${found} but the name's mission is ${wanted}`,
          (found) => `the second folder is ${found} but ancillary files live under ${ANCILLARY_FOLDER}`,
          (found, wanted) => `the instrument folder is ${found} but the name's instrument is ${wanted}`,
        ];
  return describe
    .flatMap((say, index) => {
      const found = segments[index] as string;
      const wanted = expected[index] as string;
      return found === wanted ? [] : [say(JSON.stringify(found), wanted)];
    })
    .join(', and ');
}

/** Parses either a bare file name or a full storage path. */
export function parsePathOrName(value: string): MissionFile {
  assertSafeRelativePath(value);
  return value.includes('/') ? parsePath(value) : parseName(value);
}

/** Query parameters the service accepts, in the order its messages list them. */
export const QUERY_PARAMETERS = [
  'file_path',
  'instrument',
  'data_level',
  'descriptor',
  'start_date',
  'end_date',
  'version',
  'extension',
  'table',
  'ingestion_start_date',
  'ingestion_end_date',
] as const;

export type QueryParameter = (typeof QUERY_PARAMETERS)[number];

/** Tables the query can search. */
export const QUERY_TABLES = ['science', 'ancillary'] as const;

/** True when `name` is a query parameter the service accepts. */
export function isQueryParameter(name: string): name is QueryParameter {
  return (QUERY_PARAMETERS as readonly string[]).includes(name);
}

/** The service's message for a parameter it does not know. */
export function unknownQueryParameterMessage(name: string): string {
  return `${name} is not a valid query parameter. Valid query parameters are: ${QUERY_PARAMETERS.join(', ')}`;
}

/**
 * Checks one query parameter's value; returns the message saying what is wrong, or undefined when it is
 * valid. `table` is the table searched (it decides which extensions are valid).
 */
export function queryValueProblem(
  name: QueryParameter,
  value: string,
  table: (typeof QUERY_TABLES)[number] = 'science',
): string | undefined {
  const shown = JSON.stringify(value);
  switch (name) {
    case 'table':
      return (QUERY_TABLES as readonly string[]).includes(value)
        ? undefined
        : `Invalid table ${shown}. Please choose from ${QUERY_TABLES.join(', ')}`;
    case 'instrument':
      return instrumentSchema.safeParse(value).success ? undefined : messages.instrument;
    case 'data_level':
      return dataLevelSchema.safeParse(value).success ? undefined : messages.dataLevel;
    case 'descriptor':
      return descriptorSchema.safeParse(value).success
        ? undefined
        : `Invalid descriptor ${shown}. A descriptor is letters, digits and dashes.`;
    case 'start_date':
    case 'end_date':
    case 'ingestion_start_date':
    case 'ingestion_end_date':
      return isCalendarDate(value) ? undefined : `Invalid ${name} ${shown}. Please use YYYYMMDD format.`;
    case 'version':
      return value === 'latest' || isVersion(value)
        ? undefined
        : `Invalid version ${shown}. Please use vxx-xx format or latest.`;
    case 'extension': {
      const allowed: readonly string[] = table === 'ancillary' ? ANCILLARY_EXTENSIONS : SCIENCE_EXTENSIONS;
      return allowed.includes(value)
        ? undefined
        : `Invalid extension ${shown}. Please choose from ${allowed.join(', ')}`;
    }
    case 'file_path': {
      const reason = unsafePathReason(value);
      return reason ? `Invalid file_path ${shown}: ${reason}.` : undefined;
    }
  }
}
