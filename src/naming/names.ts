/**
 * The one naming-rule validator: a file name or storage path of either generation into its parts. The version
 * token decides the generation (ARCHIVE-TODAY §4.2): `vXX-YY` is the specification's; any other name is tried
 * against today's kinds in their order (`grammars.ts`), and a name none of them reads is judged by the
 * specification's grammar, so it is refused with the messages it always got.
 */
import { ValidationError } from '../core/errors.js';
import {
  type Generation,
  isProductFile,
  isRefusal,
  type MissionFile,
  type Refusal,
  type ScienceFile,
  type SpiceFile,
} from './file-types.js';
import { type FolderRole, grammarOf, TODAY_GRAMMARS } from './grammars.js';
import { MAX_NAME_BYTES, messages } from './name-parts.js';
import { assertSafeRelativePath } from './path-safety.js';
import { hasUnsafeCharacters, parseSpecName, parseSpecScienceName } from './spec-names.js';
import { SPEC_VERSION_FORM } from './versions.js';

export type {
  AncillaryFile,
  DependencyFile,
  FileKind,
  Generation,
  InstrumentFile,
  MissionFile,
  ProductFile,
  QuicklookFile,
  ReleaseFile,
  ScienceFile,
  SpiceFile,
} from './file-types.js';

/** The version token of a name: its last `_` part without the extension (`v001.0002` of `…_v001.0002.cdf`). */
function versionToken(name: string): string {
  const last = name.slice(name.lastIndexOf('_') + 1);
  const dot = last.lastIndexOf('.');
  return dot < 0 ? last : last.slice(0, dot);
}

/** The hint beside a refused name: what today's kinds found wrong with it, or that today's forms exist. */
function todayHint(name: string, refusal: Refusal | undefined): string | undefined {
  if (refusal && refusal.problems.length > 0) {
    return `Read as a ${refusal.refused} name of today's archive: ${refusal.problems.join('; ')}.`;
  }
  if (!/^v\d{3}/.test(versionToken(name))) return undefined;
  return (
    "Names of today's archive are read too: science imap_<instrument>_<level>_<descriptor>_<YYYYMMDD>" +
    '[-repointNNNNN|-crNNNNN]_vNNN.NNNN.cdf, ancillary imap_<instrument>_<descriptor>_<YYYYMMDD>[_<YYYYMMDD>]' +
    '_vNNN.<ext>, SPICE kernels, quicklooks, dependency files and release manifests.'
  );
}

/**
 * Parses a bare file name of any kind and either generation, checking every rule. Throws a `ValidationError`
 * listing every broken rule of the specification's grammar, with a hint from today's when one of its kinds
 * nearly fits.
 */
export function parseName(name: string): MissionFile {
  checkNameLength(name);
  if (hasUnsafeCharacters(name) || SPEC_VERSION_FORM.test(versionToken(name))) return parseSpecName(name);
  let refusal: Refusal | undefined;
  for (const grammar of TODAY_GRAMMARS) {
    const read = grammar.read(name);
    if (read === undefined) continue;
    if (!isRefusal(read)) return read;
    // The kind whose extension the name has says what matters (a quicklook's descriptor, not science's `png`).
    if (!refusal || (!refusal.extensionFits && read.extensionFits)) refusal = read;
  }
  try {
    parseSpecName(name);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const hint = [error.hint, todayHint(name, refusal)].filter(Boolean).join(' ');
    throw new ValidationError(error.problems, { hint: hint || undefined });
  }
  // Unreachable: the specification's grammar reads only `vXX-YY` names, which were given to it above.
  throw new ValidationError([messages.filename(name)]);
}

/**
 * Parses a science file name of either generation; throws a `ValidationError` listing every broken rule (a name
 * of another kind is refused with the science grammar's messages).
 */
export function parseScienceName(name: string): ScienceFile {
  checkNameLength(name);
  if (!hasUnsafeCharacters(name) && !SPEC_VERSION_FORM.test(versionToken(name))) {
    const read = TODAY_GRAMMARS[0]?.read(name);
    if (read && !isRefusal(read) && read.kind === 'science') return read;
  }
  return parseSpecScienceName(name);
}

/** A name longer than a file system keeps (with its in-flight suffixes) is refused before any other rule. */
function checkNameLength(name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) throw new ValidationError([messages.tooLong(name, bytes)]);
}

/**
 * A warning about a name the archive's order of kinds reads one way though it fits another (ARCHIVE-TODAY
 * §4.2): a science descriptor of digits only is most likely an ancillary file's first date. Undefined otherwise.
 */
export function nameWarning(file: MissionFile): string | undefined {
  if (file.generation !== 'today' || !isProductFile(file) || !/^\d+$/.test(file.descriptor)) return undefined;
  return (
    `${file.name} is read as a ${file.kind} file with the descriptor ${file.descriptor} (all digits), ` +
    'as the archive reads it; if it is an ancillary file with two dates, its name cannot say so.'
  );
}

/**
 * What `formatName` builds a name from: a parsed file of any kind but SPICE (whose names have no parts to
 * rebuild from) without its name and path; `generation` defaults to the specification's, and today's suffixes
 * to none.
 */
export type NameParts<File = Exclude<MissionFile, SpiceFile>> = File extends MissionFile
  ? Omit<File, 'name' | 'path' | 'generation' | 'repointing' | 'cr'> & {
      generation?: Generation | undefined;
      repointing?: number | undefined;
      cr?: number | undefined;
    }
  : never;

/** Builds the file name of a parsed file (the inverse of `parseName`; a SPICE kernel's name is its own). */
export function formatName(file: NameParts | SpiceFile): string {
  if (file.kind === 'spice') return file.name;
  if ('dataLevel' in file) {
    if (file.generation !== 'today') {
      const parts = [
        file.mission,
        file.instrument,
        file.dataLevel,
        file.descriptor,
        file.startDate,
        file.endDate,
      ];
      return `${[...parts, file.version].join('_')}.${file.extension}`;
    }
    const suffix =
      file.repointing !== undefined
        ? `-repoint${String(file.repointing).padStart(5, '0')}`
        : file.cr !== undefined
          ? `-cr${String(file.cr).padStart(5, '0')}`
          : '';
    const parts = [
      file.mission,
      file.instrument,
      file.dataLevel,
      file.descriptor,
      `${file.startDate}${suffix}`,
    ];
    return `${[...parts, file.version].join('_')}.${file.extension}`;
  }
  const parts = [file.mission, file.instrument, file.descriptor, file.startDate, file.endDate, file.version];
  return `${parts.filter((part) => part !== undefined).join('_')}.${file.extension}`;
}

/**
 * Parses a storage path of any kind (`imap/<instrument>/<level>/<YYYY>/<MM>/<name>`,
 * `imap/ancillary/<instrument>/<name>`, `imap/spice/<folder>/<name>` …): the path must be safe, its name valid
 * and its folders must agree with the name. Throws a `ValidationError` saying what is wrong.
 */
export function parsePath(path: string): MissionFile {
  assertSafeRelativePath(path);
  return placedAt(path, parseName(path.slice(path.lastIndexOf('/') + 1)));
}

/**
 * `file` (its name parsed) as found at the safe storage path `path`: throws a `ValidationError` saying which
 * folders disagree with the name when the path is not the one the rules give it.
 */
export function placedAt(path: string, file: MissionFile): MissionFile {
  if (file.path !== path) {
    throw new ValidationError([
      `Invalid path ${path}: ${folderMismatch(path.split('/'), file)}; expected ${file.path} (${grammarOf(file).layout}).`,
    ]);
  }
  return file;
}

/** What a folder of the wrong name says, by its role. */
function describeFolder(role: FolderRole, found: string, wanted: string, file: MissionFile): string {
  if (typeof role === 'object')
    return `the second folder is ${found} but ${role.files} live under ${role.under}`;
  switch (role) {
    case 'mission':
      return `the mission folder is ${found} but the name's mission is ${wanted}`;
    case 'instrument':
      return `the instrument folder is ${found} but the name's instrument is ${wanted}`;
    case 'level':
      return `the data level folder is ${found} but the name's data level is ${wanted}`;
    case 'year':
      return `the year folder is ${found} but the name's start date is in ${wanted}`;
    case 'month':
      return `the month folder is ${found} but the name's start date is in month ${wanted}`;
    case 'kernel':
      return `the kernel folder is ${found} but ${file.kind === 'spice' ? `a ${file.kernelType}` : 'this'} kernel lives in ${wanted}`;
  }
}

/** Says which folders of a path (its segments, the name last) disagree with its file name. */
export function folderMismatch(segments: readonly string[], file: MissionFile): string {
  const expected = file.path.split('/');
  if (segments.length !== expected.length) {
    const folders = (count: number) => `${count} folder${count === 1 ? '' : 's'}`;
    return `it has ${folders(segments.length - 1)} above the file name where ${folders(expected.length - 1)} belong`;
  }
  const roles = grammarOf(file).folders;
  return roles
    .flatMap((role, index) => {
      const found = segments[index] as string;
      const wanted = expected[index] as string;
      return found === wanted ? [] : [describeFolder(role, JSON.stringify(found), wanted, file)];
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
  if (file.endDate === undefined || file.startDate === undefined || file.endDate >= file.startDate) {
    return undefined;
  }
  return `Invalid dates: the end date ${file.endDate} is before the start date ${file.startDate}.`;
}
