/**
 * The grammars of today's archive (ARCHIVE-TODAY §1.2-1.5), one reader per kind: science, ancillary, quicklook,
 * dependency and release. Each answers undefined when its grammar does not fit a name, a refusal when it fits
 * but breaks a rule (an instrument of no generation, a day that does not exist), or the parsed file.
 */
import { didYouMean } from './did-you-mean.js';
import type {
  AncillaryFile,
  DependencyFile,
  QuicklookFile,
  Refusal,
  ReleaseFile,
  ScienceFile,
} from './file-types.js';
import {
  ANCILLARY_EXTENSIONS,
  ANCILLARY_FOLDER,
  type AncillaryExtension,
  type DataLevel,
  type Instrument,
  MISSION,
  TODAY_DATA_LEVELS,
  TODAY_INSTRUMENTS,
} from './mission.js';
import { calendarDateProblem, isCalendarDate } from './name-parts.js';
import { hasControlCharacter } from './path-safety.js';

/** Today's science grammar, shared by quicklooks and dependency files. */
const PRODUCT_NAME =
  /^imap_([^_]+)_([^_]+)_([^_]+)_(\d{8})(?:-(repoint|cr)(\d{5}))?_(v\d{3}\.\d{4}|v\d{3})\.([^.]+)$/;
/** Today's ancillary grammar, shared by release manifests. */
const DATED_NAME = /^imap_([^_]+)_([^_]+)_(\d{8})(?:_(\d{8}))?_(v\d{3})\.([^.]+)$/;

/** Extensions of each kind of today's archive. */
export const TODAY_EXTENSIONS = {
  science: ['cdf', 'pkts'],
  quicklook: ['jpg', 'pdf', 'png'],
  dependency: ['json'],
  ancillary: ANCILLARY_EXTENSIONS,
  release: ['txt'],
} as const;

function isTodayInstrument(value: string): value is Instrument {
  return (TODAY_INSTRUMENTS as readonly string[]).includes(value);
}

function isTodayLevel(value: string): value is DataLevel {
  return (TODAY_DATA_LEVELS as readonly string[]).includes(value);
}

function instrumentProblem(value: string): string | undefined {
  if (isTodayInstrument(value)) return undefined;
  const suggestion = didYouMean(value, TODAY_INSTRUMENTS, 'instruments');
  return `${JSON.stringify(value)} is not an instrument of today's archive (${TODAY_INSTRUMENTS.join(', ')})${suggestion ? `; ${suggestion}` : ''}`;
}

function dateProblem(value: string): string | undefined {
  if (isCalendarDate(value)) return undefined;
  return calendarDateProblem(value) ?? `${value} is not a date`;
}

/**
 * Characters today's grammar lets into a descriptor (any run without `_`) that no file name may hold on every
 * system the tool runs on: Windows refuses `: * ? " < > |`, and a glob or a shell reads `*` and `?` as patterns.
 * (`\\`, `/`, `%` and control characters never reach this reader: such names are refused before it.)
 */
const UNSAFE_DESCRIPTOR_CHARACTERS = /[:*?"<>|\\/%]/g;

/** Why a descriptor of today's grammar cannot be a file name's part everywhere; undefined when it can. */
function descriptorProblem(descriptor: string): string | undefined {
  const found = [...new Set(descriptor.match(UNSAFE_DESCRIPTOR_CHARACTERS) ?? [])];
  if (found.length === 0 && !hasControlCharacter(descriptor)) return undefined;
  const what =
    found.length > 0 ? found.map((character) => `'${character}'`).join(', ') : 'a control character';
  return `the descriptor ${JSON.stringify(descriptor)} holds ${what}, which no file name may hold on every system`;
}

function fits(extension: string, allowed: readonly string[]): boolean {
  return allowed.includes(extension);
}

function extensionProblem(extension: string, allowed: readonly string[], what: string): string | undefined {
  return fits(extension, allowed)
    ? undefined
    : `the extension ${JSON.stringify(extension)} is not one of ${what}'s (${allowed.join(', ')})`;
}

/** Reads a name of the science grammar as the given kind (science, quicklook or dependency). */
function readProduct<Kind extends 'science' | 'quicklook' | 'dependency'>(
  kind: Kind,
  name: string,
): (ScienceFile | QuicklookFile | DependencyFile) | Refusal | undefined {
  const match = PRODUCT_NAME.exec(name);
  if (!match) return undefined;
  const [, instrument, level, descriptor, start, suffix, number, version, extension] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
    string | undefined,
    string,
    string,
  ];
  const problems = [
    instrumentProblem(instrument),
    isTodayLevel(level)
      ? undefined
      : `${JSON.stringify(level)} is not a data level of today's archive (${TODAY_DATA_LEVELS.join(', ')})`,
    descriptorProblem(descriptor),
    dateProblem(start),
    extensionProblem(extension, TODAY_EXTENSIONS[kind], `a ${kind} file`),
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0 || !isTodayInstrument(instrument) || !isTodayLevel(level)) {
    return { refused: kind, problems, extensionFits: fits(extension, TODAY_EXTENSIONS[kind]) };
  }
  const folder = kind === 'science' ? [] : [kind];
  return {
    kind,
    generation: 'today',
    mission: MISSION,
    instrument,
    dataLevel: level,
    descriptor,
    startDate: start,
    endDate: undefined,
    repointing: suffix === 'repoint' ? Number(number) : undefined,
    cr: suffix === 'cr' ? Number(number) : undefined,
    version,
    extension,
    name,
    path: [MISSION, ...folder, instrument, level, start.slice(0, 4), start.slice(4, 6), name].join('/'),
  } as ScienceFile | QuicklookFile | DependencyFile;
}

/** Reads a name of the ancillary grammar as the given kind (ancillary or release). */
function readDated(
  kind: 'ancillary' | 'release',
  name: string,
): AncillaryFile | ReleaseFile | Refusal | undefined {
  const match = DATED_NAME.exec(name);
  if (!match) return undefined;
  const [, instrument, descriptor, start, end, version, extension] = match as unknown as [
    string,
    string,
    string,
    string,
    string | undefined,
    string,
    string,
  ];
  const problems = [
    instrumentProblem(instrument),
    descriptorProblem(descriptor),
    dateProblem(start),
    end === undefined ? undefined : dateProblem(end),
    extensionProblem(
      extension,
      TODAY_EXTENSIONS[kind],
      kind === 'release' ? 'a release manifest' : 'an ancillary file',
    ),
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0 || !isTodayInstrument(instrument)) {
    return { refused: kind, problems, extensionFits: fits(extension, TODAY_EXTENSIONS[kind]) };
  }
  return {
    kind,
    generation: 'today',
    mission: MISSION,
    instrument,
    descriptor,
    startDate: start,
    endDate: end,
    version,
    extension: extension as AncillaryExtension & 'txt',
    name,
    path: [MISSION, kind === 'release' ? 'release' : ANCILLARY_FOLDER, instrument, name].join('/'),
  } as AncillaryFile | ReleaseFile;
}

/** Reads a science name of today's generation. */
export const readTodayScience = (name: string) => readProduct('science', name);
/** Reads a quicklook's name. */
export const readQuicklook = (name: string) => readProduct('quicklook', name);
/** Reads a dependency file's name. */
export const readDependency = (name: string) => readProduct('dependency', name);
/** Reads an ancillary name of today's generation. */
export const readTodayAncillary = (name: string) => readDated('ancillary', name);
/** Reads a release manifest's name. */
export const readRelease = (name: string) => readDated('release', name);
