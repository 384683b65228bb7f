/**
 * The one naming-rule validator: parses and checks science and ancillary file names and storage paths, with
 * the rules of each name part from `name-parts.ts`.
 */
import { ValidationError } from '../core/errors.js';
import * as z from '../core/zod.js';
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
import {
  DESCRIPTOR_FORM,
  isCalendarDate,
  MAX_NAME_BYTES,
  messages,
  namePartHint,
  VERSION_FORM,
} from './name-parts.js';
import { assertSafeRelativePath, hasControlCharacter } from './path-safety.js';

const instrumentSchema = z.enum(INSTRUMENTS);
const dataLevelSchema = z.enum(DATA_LEVELS);
const versionSchema = z.string().check(z.regex(VERSION_FORM));
const dateSchema = z.string().check(z.refine(isCalendarDate));
const descriptorSchema = z.string().check(z.regex(DESCRIPTOR_FORM));
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
    throw new ValidationError(problems, {
      hint: nameHints([
        instrumentResult.success ? undefined : namePartHint('instrument', instrument),
        levelResult.success ? undefined : namePartHint('data level', level),
        namePartHint('date', start),
        namePartHint('date', end),
        extensionOk ? undefined : namePartHint('extension', split.extension),
      ]),
    });
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
    throw new ValidationError(problems, {
      hint: nameHints([
        instrumentResult.success ? undefined : namePartHint('instrument', instrument),
        namePartHint('date', start),
        end === undefined ? undefined : namePartHint('date', end),
        extensionResult.success ? undefined : namePartHint('extension', extension),
      ]),
    });
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

/**
 * The client's suggestions about a bad name, as the error's hint: the service's messages stay as it words
 * them, and the hint adds what it cannot say (did you mean mag? 20250230 is not a date of the calendar).
 */
function nameHints(hints: ReadonlyArray<string | undefined>): string | undefined {
  const given = [...new Set(hints.filter((hint) => hint !== undefined))];
  return given.length > 0 ? given.join(' ') : undefined;
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

function hasUnsafeCharacters(value: string): boolean {
  return hasControlCharacter(value) || /[\\/%]/.test(value);
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

/** Says which folders of a path (its segments, the name last) disagree with its file name. */
export function folderMismatch(segments: readonly string[], file: MissionFile): string {
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

/**
 * Why a name's dates cannot be right: its end date before its start date; undefined when they are in order (or
 * it has one date). Not a rule of `parseName`: the service does not check it, so an archive may hold such a
 * file, and download and query must still reach it; `upload` refuses to add one.
 */
export function dateOrderProblem(file: MissionFile): string | undefined {
  if (file.endDate === undefined || file.endDate >= file.startDate) return undefined;
  return `Invalid dates: the end date ${file.endDate} is before the start date ${file.startDate}.`;
}
