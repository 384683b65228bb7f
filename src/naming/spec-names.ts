/**
 * Names of the first specification's generation (SPEC §7): science `imap_<inst>_<lvl>_<desc>_<start>_<end>_vXX-YY`
 * and ancillary `imap_<inst>_<desc>_<start>[_<end>]_vXX-YY`, with the specification's vocabulary and its
 * messages word for word. Every name no kind of today's reads is judged here, so a refused name gets the
 * messages it always got.
 */
import { ValidationError } from '../core/errors.js';
import type { AncillaryFile, ScienceFile } from './file-types.js';
import {
  ANCILLARY_EXTENSIONS,
  ANCILLARY_FOLDER,
  DATA_LEVELS,
  INSTRUMENTS,
  looksLikeDataLevel,
  MISSION,
  SCIENCE_EXTENSIONS,
  type ScienceExtension,
  scienceExtensionFor,
} from './mission.js';
import { DESCRIPTOR_FORM, isCalendarDate, messages, namePartHint, VERSION_FORM } from './name-parts.js';
import { hasControlCharacter } from './path-safety.js';

/**
 * `value` when it is one of `allowed`, else undefined. The parts of a name are checked by lookups and patterns,
 * not by a schema each: a data root's scan reads 100,000 names, and a schema's parse of each part made a tenth of
 * a name's reading.
 */
function oneOf<Word extends string>(allowed: readonly Word[], value: string): Word | undefined {
  return (allowed as readonly string[]).includes(value) ? (value as Word) : undefined;
}

/** Splits a name into its stem parts and extension; undefined when it has no extension. */
function splitName(name: string): { parts: string[]; extension: string } | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return undefined;
  return { parts: name.slice(0, dot).split('_'), extension: name.slice(dot + 1) };
}

/** True when a name holds what no name may (a control character, a folder separator, a percent sign). */
export function hasUnsafeCharacters(value: string): boolean {
  return hasControlCharacter(value) || /[\\/%]/.test(value);
}

/**
 * Parses a name by the specification's grammar, checking every rule. A name with seven parts, or whose third
 * part looks like a data level (`l` and a digit, known or not), is read as a science name; a name of five or six
 * parts otherwise as an ancillary name. Throws a `ValidationError` listing every broken rule.
 */
export function parseSpecName(name: string): ScienceFile | AncillaryFile {
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
  return parseSpecScience(name, split);
}

/** Parses a science name by the specification's grammar; throws a `ValidationError` listing every broken rule. */
export function parseSpecScienceName(name: string): ScienceFile {
  return parseSpecScience(name, hasUnsafeCharacters(name) ? undefined : splitName(name));
}

function parseSpecScience(name: string, split: ReturnType<typeof splitName>): ScienceFile {
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
  if (!DESCRIPTOR_FORM.test(descriptor)) throw new ValidationError([messages.filename(name)]);
  const problems: string[] = [];
  if (mission !== MISSION) problems.push(messages.mission);
  const knownInstrument = oneOf(INSTRUMENTS, instrument);
  if (knownInstrument === undefined) problems.push(messages.instrument);
  const knownLevel = oneOf(DATA_LEVELS, level);
  if (knownLevel === undefined) problems.push(messages.dataLevel);
  if (!isCalendarDate(start)) problems.push(messages.startDate);
  if (!isCalendarDate(end)) problems.push(messages.endDate);
  if (!VERSION_FORM.test(version)) problems.push(messages.version);
  const extensionOk =
    knownLevel !== undefined
      ? split.extension === scienceExtensionFor(knownLevel)
      : (SCIENCE_EXTENSIONS as readonly string[]).includes(split.extension);
  if (!extensionOk) problems.push(messages.extension);
  if (problems.length > 0 || knownInstrument === undefined || knownLevel === undefined) {
    throw new ValidationError(problems, {
      hint: nameHints([
        knownInstrument !== undefined ? undefined : namePartHint('instrument', instrument),
        knownLevel !== undefined ? undefined : namePartHint('data level', level),
        namePartHint('date', start),
        namePartHint('date', end),
        extensionOk ? undefined : namePartHint('extension', split.extension),
      ]),
    });
  }
  return {
    kind: 'science',
    generation: 'spec',
    mission: MISSION,
    instrument: knownInstrument,
    dataLevel: knownLevel,
    descriptor,
    startDate: start,
    endDate: end,
    repointing: undefined,
    cr: undefined,
    version,
    extension: split.extension as ScienceExtension,
    name,
    path: [MISSION, instrument, level, start.slice(0, 4), start.slice(4, 6), name].join('/'),
  };
}

function parseAncillary(name: string, parts: string[], extension: string): AncillaryFile {
  if (!parts.every((part) => part.length > 0) || !DESCRIPTOR_FORM.test(parts[2] ?? '')) {
    throw new ValidationError([messages.ancillaryFilename(name)]);
  }
  const [mission, instrument, descriptor, start] = parts as [string, string, string, string];
  const end = parts.length === 6 ? parts[4] : undefined;
  const version = parts[parts.length - 1] as string;
  const problems: string[] = [];
  if (mission !== MISSION) problems.push(messages.mission);
  const knownInstrument = oneOf(INSTRUMENTS, instrument);
  if (knownInstrument === undefined) problems.push(messages.instrument);
  if (!isCalendarDate(start)) problems.push(messages.startDate);
  if (end !== undefined && !isCalendarDate(end)) problems.push(messages.endDate);
  if (!VERSION_FORM.test(version)) problems.push(messages.version);
  const knownExtension = oneOf(ANCILLARY_EXTENSIONS, extension);
  if (knownExtension === undefined) problems.push(messages.ancillaryExtension);
  if (problems.length > 0 || knownInstrument === undefined || knownExtension === undefined) {
    throw new ValidationError(problems, {
      hint: nameHints([
        knownInstrument !== undefined ? undefined : namePartHint('instrument', instrument),
        namePartHint('date', start),
        end === undefined ? undefined : namePartHint('date', end),
        knownExtension !== undefined ? undefined : namePartHint('extension', extension),
      ]),
    });
  }
  return {
    kind: 'ancillary',
    generation: 'spec',
    mission: MISSION,
    instrument: knownInstrument,
    descriptor,
    startDate: start,
    endDate: end,
    version,
    extension: knownExtension,
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
