/**
 * A glob over the archive's names (`*`, `?`, `[...]`, as a shell reads them, never across a `/`): the query its
 * fixed parts spell (instrument, level, descriptor, the start dates a layout path or a name pins down; the table
 * and kernel types of an ancillary or SPICE glob), and a test of each storage path the query returns. A file name
 * glob is matched against names, a path glob against storage paths.
 */
import {
  ANCILLARY_FOLDER,
  ANY_INSTRUMENTS,
  isDataLevel,
  isInstrument,
  looksLikeDataLevel,
  MISSION,
} from './mission.js';
import { isDescriptor } from './name-parts.js';
import type { QueryFilters } from './query-vocabulary.js';
import { SPICE_KERNEL_TYPES, SPICE_TYPES, type SpiceKernelType } from './spice.js';

const GLOB_CHARACTER = /[*?[]/;

/** True when `text` holds a glob character (`*`, `?` or `[`). */
export function isGlob(text: string): boolean {
  return GLOB_CHARACTER.test(text);
}

/** A glob read: the filters of its fixed parts (empty when it pins nothing down) and its test. */
export interface ArchiveGlob {
  pattern: string;
  /** The query of its fixed parts (for a SPICE glob of several kernel types, the table without a type). */
  filters: QueryFilters;
  /**
   * Queries whose answers together hold every file the glob can match: `[filters]`, or one per kernel type for a
   * SPICE glob of several (`imap/spice/ck/*`), for a service that takes one type a query.
   */
  queries: QueryFilters[];
  /** Why no query lists the files the glob names (quicklooks, dependency files, release manifests); else absent. */
  unlisted?: string | undefined;
  /** True when a storage path matches the glob (its name alone, for a glob without `/`). */
  matches(storagePath: string): boolean;
}

/** The regular expression of a glob: `*` any run of characters but `/`, `?` one, `[...]` a class (`[!...]` too). */
export function globExpression(pattern: string): RegExp {
  let source = '';
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at] as string;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const close = pattern.indexOf(']', at + 2);
      if (close < 0) source += '\\[';
      else {
        let inside = pattern.slice(at + 1, close);
        const negated = inside.startsWith('!') || inside.startsWith('^');
        if (negated) inside = inside.slice(1);
        source += `[${negated ? '^/' : ''}${inside.replace(/[\\\]]/g, '\\$&')}]`;
        at = close;
      }
    } else source += char.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The characters of `text` before its first glob character. */
function fixedPrefix(text: string): string {
  const at = text.search(GLOB_CHARACTER);
  return at < 0 ? text : text.slice(0, at);
}

/** The characters of `text` after its last glob character (a `[...]` class counts as one). */
function fixedSuffix(text: string): string {
  let at = -1;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '*' || char === '?') at = index;
    else if (char === '[') {
      const close = text.indexOf(']', index + 2);
      if (close >= 0) {
        at = close;
        index = close;
      }
    }
  }
  return text.slice(at + 1);
}

/** Start dates a fixed date prefix pins down: `2025` a year, `202501` a month, `20250107` a day. */
function dateRange(prefix: string): Pick<QueryFilters, 'startDate' | 'endDate'> {
  const digits = /^\d*/.exec(prefix)?.[0] ?? '';
  if (digits.length >= 8) return { startDate: digits.slice(0, 8), endDate: digits.slice(0, 8) };
  if (digits.length >= 6) {
    const year = Number(digits.slice(0, 4));
    const month = Number(digits.slice(4, 6));
    if (month < 1 || month > 12) return {};
    const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
    return { startDate: `${digits.slice(0, 6)}01`, endDate: `${digits.slice(0, 6)}${days}` };
  }
  if (digits.length >= 4)
    return { startDate: `${digits.slice(0, 4)}0101`, endDate: `${digits.slice(0, 4)}1231` };
  return {};
}

/** The start dates, and today's repointing, of a name's date part (`20250105-repoint00042`). */
function dateFilters(part: string): QueryFilters {
  const repoint = /^\d{8}-repoint(\d{5})(?:$|[^0-9])/.exec(part);
  const dates = dateRange(isGlob(part) ? fixedPrefix(part) : part);
  return repoint ? { ...dates, repointing: String(Number(repoint[1])) } : dates;
}

/**
 * Filters from an instrument's file name glob (`imap_<instrument>_…`): the `_` parts before the first that holds a
 * glob character. A third part of a data level's shape is a science product's level; another word an ancillary
 * file's descriptor. Only values a query takes are kept: the glob's test narrows the rest.
 */
function nameFilters(name: string): QueryFilters {
  const [mission, instrument, third, fourth, fifth] = name.split('_');
  if (mission !== MISSION || instrument === undefined || !isInstrument(instrument)) return {};
  if (third === undefined || isGlob(third)) return { instrument };
  if (!isDataLevel(third) && !looksLikeDataLevel(third)) {
    const ancillary: QueryFilters = { table: 'ancillary', instrument };
    if (isDescriptor(third)) ancillary.descriptor = third;
    return fourth === undefined ? ancillary : { ...ancillary, ...dateFilters(fourth) };
  }
  const filters: QueryFilters = { instrument, dataLevel: third };
  // A glob character may stand for several parts: what follows it has no known place.
  if (fourth === undefined || isGlob(fourth)) return filters;
  if (isDescriptor(fourth)) filters.descriptor = fourth;
  return fifth === undefined ? filters : { ...filters, ...dateFilters(fifth) };
}

/** The literal endings of each kernel type's names (lower case; the archive allows some in upper case). */
const KERNEL_ENDINGS: Record<SpiceKernelType, readonly string[]> = {
  attitude_history: ['.ah.bc'],
  attitude_predict: ['.ap.bc'],
  pointing_attitude: ['.ah.bc'],
  spin: ['.spin', '.spin.csv'],
  repoint: ['.repoint', '.repoint.csv'],
  ephemeris_reconstructed: ['.bsp'],
  ephemeris_nominal: ['.bsp'],
  ephemeris_predicted: ['.bsp'],
  ephemeris_90days: ['.bsp'],
  ephemeris_long: ['.bsp'],
  ephemeris_launch: ['.bsp'],
  lagrange_point: ['.bsp'],
  planetary_ephemeris: ['.bsp'],
  planetary_constants: ['.tpc'],
  leapseconds: ['.tls'],
  spacecraft_clock: ['.tsc'],
  imap_frames: ['.tf'],
  science_frames: ['.tf'],
  thruster: ['.sff'],
  metakernel: ['.tm', '.mk'],
  earth_attitude: ['.bpc'],
};

/** The literal beginnings of each kernel type's names (lower case). */
const KERNEL_BEGINNINGS: Record<SpiceKernelType, readonly string[]> = {
  attitude_history: ['imap_'],
  attitude_predict: ['imap_'],
  pointing_attitude: ['imap_dps_'],
  spin: ['imap_'],
  repoint: ['imap_'],
  ephemeris_reconstructed: ['imap_recon_'],
  ephemeris_nominal: ['imap_nom_'],
  ephemeris_predicted: ['imap_pred_'],
  ephemeris_90days: ['imap_90days_'],
  ephemeris_long: ['imap_long_'],
  ephemeris_launch: ['imap_launch_'],
  lagrange_point: ['l1_de'],
  planetary_ephemeris: ['de'],
  planetary_constants: ['pck'],
  leapseconds: ['naif'],
  spacecraft_clock: ['imap_sclk_'],
  imap_frames: ['imap_'],
  science_frames: ['imap_science_'],
  thruster: ['imap_'],
  metakernel: ['imap_'],
  earth_attitude: ['earth_'],
};

/** True when one text begins (`ends`) with the other: a name fixed to one can have the other. */
const agree = (a: string, b: string, ends: boolean) =>
  ends ? a.endsWith(b) || b.endsWith(a) : a.startsWith(b) || b.startsWith(a);

/** The kernel types whose names a name glob can match, judged by its text before and after its glob characters. */
function kernelTypesOf(name: string, among: readonly SpiceKernelType[]): SpiceKernelType[] {
  const head = fixedPrefix(name).toLowerCase();
  const tail = (isGlob(name) ? fixedSuffix(name) : name).toLowerCase();
  return among.filter(
    (type) =>
      KERNEL_ENDINGS[type].some((ending) => agree(tail, ending, true)) &&
      KERNEL_BEGINNINGS[type].some((beginning) => agree(head, beginning, false)),
  );
}

/**
 * True when a name glob of no instrument names SPICE kernels: its ending is some kernel types' only (`*.tls`), or
 * its beginning cannot begin an instrument's file name (`earth_*`, `imap_dps_*`). `imap_*` or `*` pin down nothing.
 */
function namesKernels(name: string): boolean {
  const byEnding = kernelTypesOf(`*${fixedSuffix(name)}`, SPICE_TYPES).length;
  if (byEnding === 0) return false;
  if (byEnding < SPICE_TYPES.length) return true;
  const head = fixedPrefix(name);
  if (!`${MISSION}_`.startsWith(head) && !head.startsWith(`${MISSION}_`)) return true;
  const rest = head.slice(MISSION.length + 1);
  const word = rest.split('_')[0] ?? '';
  const instruments = ANY_INSTRUMENTS.filter((instrument) =>
    rest.includes('_') ? instrument === word : instrument.startsWith(word),
  );
  return head.length > MISSION.length && instruments.length === 0;
}

/** The queries of a SPICE glob: one per kernel type it can match, and the table alone to list them all. */
function spiceQueries(types: readonly SpiceKernelType[]): Pick<ArchiveGlob, 'filters' | 'queries'> {
  const queries = types.map((kernelType): QueryFilters => ({ table: 'spice', kernelType }));
  return { filters: queries.length === 1 ? (queries[0] as QueryFilters) : { table: 'spice' }, queries };
}

/** Folders below the mission folder whose files no query lists, with what they hold. */
const UNLISTED_FOLDERS: Record<string, string> = {
  quicklook: 'quicklooks',
  dependency: 'dependency files',
  release: 'release manifests',
};

/** Why no query lists what a folder holds. */
function unlistedReason(what: string): string {
  return `the archive's query lists no ${what}: download them by name or by storage path`;
}

/** Filters from the folders of a layout path glob: `imap/<instrument>/<level>/<YYYY>/<MM>/`, up to a glob. */
function folderFilters(folders: readonly string[]): QueryFilters {
  const [mission, instrument, level, year, month] = folders;
  if (mission !== MISSION || instrument === undefined || isGlob(instrument)) return {};
  if (instrument === ANCILLARY_FOLDER) {
    return level === undefined || isGlob(level)
      ? { table: 'ancillary' }
      : { table: 'ancillary', instrument: level };
  }
  const filters: QueryFilters = { instrument };
  if (level === undefined || isGlob(level)) return filters;
  filters.dataLevel = level;
  if (year === undefined) return filters;
  const date = isGlob(year)
    ? fixedPrefix(year)
    : month === undefined || isGlob(month)
      ? year
      : `${year}${month}`;
  return { ...filters, ...dateRange(date.length === 4 || date.length === 6 ? date : '') };
}

/** A glob over SPICE kernels: below `imap/spice/[<folder>/]`, or a bare name none of an instrument's. */
function spiceGlob(folders: readonly string[], name: string): Pick<ArchiveGlob, 'filters' | 'queries'> {
  const folder = folders[2];
  const inFolder =
    folder === undefined || isGlob(folder)
      ? SPICE_TYPES
      : SPICE_TYPES.filter((type) => SPICE_KERNEL_TYPES[type] === folder);
  return spiceQueries(kernelTypesOf(name, inFolder));
}

/** The filters of a glob of an instrument's files (science, ancillary): its folders', then its name's. */
function instrumentGlob(folders: readonly string[], name: string): QueryFilters {
  const fromFolders = folders.length > 0 ? folderFilters(folders) : {};
  if (fromFolders.table === 'ancillary') {
    // Ancillary names have no level: of a name, its instrument, descriptor and dates.
    const fromName = nameFilters(name);
    return fromName.table === 'ancillary' ? { ...fromFolders, ...fromName } : fromFolders;
  }
  if (folders.length > 0 && fromFolders.instrument === undefined) return fromFolders;
  // A name's dates inside the folder's month narrow it; the instrument and level are the same either way.
  return { ...fromFolders, ...nameFilters(name) };
}

/**
 * Reads a glob over storage paths (`imap/mag/l2/2025/01/*.cdf`, `imap/spice/ck/*`) or names
 * (`imap_mag_l2_norm_202501*`, `naif*.tls`): the filters of its fixed parts, where the folders and the name agree
 * (the name's win where they say more). A name glob of no instrument is read as one of SPICE kernels when its
 * ending narrows the kernel types.
 */
export function readGlob(pattern: string): ArchiveGlob {
  const segments = pattern.split('/');
  const name = segments[segments.length - 1] ?? '';
  const folders = segments.slice(0, -1);
  const expression = globExpression(pattern);
  const byName = segments.length === 1;
  const matches = (storagePath: string) =>
    expression.test(byName ? storagePath.slice(storagePath.lastIndexOf('/') + 1) : storagePath);
  const second = folders[1];
  if (folders[0] === MISSION && second !== undefined && Object.hasOwn(UNLISTED_FOLDERS, second)) {
    return {
      pattern,
      filters: {},
      queries: [],
      unlisted: unlistedReason(UNLISTED_FOLDERS[second] as string),
      matches,
    };
  }
  if (folders[0] === MISSION && second === 'spice') return { pattern, ...spiceGlob(folders, name), matches };
  const filters = instrumentGlob(folders, name);
  if (filters.instrument === undefined && filters.table === undefined && byName && namesKernels(name)) {
    return { pattern, ...spiceGlob([], name), matches };
  }
  const unlisted = /\.(png|jpg|pdf|txt)$/.test(fixedSuffix(name))
    ? unlistedReason('quicklooks (png, jpg, pdf) or release manifests (txt)')
    : undefined;
  return { pattern, filters, queries: unlisted ? [] : [filters], unlisted, matches };
}
