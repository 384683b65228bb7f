/**
 * SPICE kernel names (ARCHIVE-TODAY §1.4): twelve patterns tried in order, the first that matches deciding.
 * Literal text of a name (`imap_`, `earth_`, `.spice.`) may be in any case where the archive allows it; the
 * tokens that say a kernel's type (its suffix, `dps`, `sclk_`, `science`, the ephemeris word, `naif`/`de`/`pck`)
 * must be lower case. Unlike the archive's own client, both ends are anchored, an ephemeris word or a constant
 * kernel's prefix must be one the table knows, and a constant kernel's extension must be its type's.
 */
import type { Refusal, SpiceFile } from './file-types.js';
import { MISSION } from './mission.js';
import { isCalendarDate } from './name-parts.js';

/** The folders below `imap/spice/`. */
export const SPICE_FOLDERS = [
  'ck',
  'spk',
  'pck',
  'lsk',
  'sclk',
  'fk',
  'mk',
  'spin',
  'repoint',
  'activities',
] as const;

/** The kernel types (the query's `--type` values), each with the folder its kernels are stored in. */
export const SPICE_KERNEL_TYPES = {
  attitude_history: 'ck',
  attitude_predict: 'ck',
  pointing_attitude: 'ck',
  spin: 'spin',
  repoint: 'repoint',
  ephemeris_reconstructed: 'spk',
  ephemeris_nominal: 'spk',
  ephemeris_predicted: 'spk',
  ephemeris_90days: 'spk',
  ephemeris_long: 'spk',
  ephemeris_launch: 'spk',
  lagrange_point: 'spk',
  planetary_ephemeris: 'spk',
  planetary_constants: 'pck',
  leapseconds: 'lsk',
  spacecraft_clock: 'sclk',
  imap_frames: 'fk',
  science_frames: 'fk',
  thruster: 'activities',
  metakernel: 'mk',
  earth_attitude: 'pck',
} as const satisfies Record<string, (typeof SPICE_FOLDERS)[number]>;

export type SpiceKernelType = keyof typeof SPICE_KERNEL_TYPES;

/** Every kernel type, in the table's order. */
export const SPICE_TYPES = Object.keys(SPICE_KERNEL_TYPES) as SpiceKernelType[];

/** True when `value` is a kernel type. */
export function isSpiceKernelType(value: string): value is SpiceKernelType {
  return Object.hasOwn(SPICE_KERNEL_TYPES, value);
}

/** A regular-expression source matching `text` in any case (`imap_` → `[iI][mM][aA][pP]_`). */
function anyCase(text: string): string {
  return [...text]
    .map((character) => {
      const lower = character.toLowerCase();
      const upper = character.toUpperCase();
      if (lower !== upper) return `[${lower}${upper}]`;
      return character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
}

const IMAP = anyCase('imap_');
const DAY_OF_YEAR = String.raw`(\d{4}_\d{3})`;

/** What a pattern's match says of a kernel: its type and the dates and version its name carries. */
interface KernelParts {
  type: string;
  /** Why the name is no kernel though its pattern fits (an ephemeris word or an extension the table has not). */
  problem?: string | undefined;
  /** Dates as the name writes them, each with its form. */
  start?: { form: DateForm; value: string } | undefined;
  end?: { form: DateForm; value: string } | undefined;
  version: string;
}

type DateForm = 'YYYY_DDD' | 'YYYYMMDD' | 'YYMMDD';

/** One of the twelve patterns, and what its match says. */
interface SpicePattern {
  pattern: RegExp;
  read(match: RegExpExecArray): KernelParts;
}

const SUFFIX_TYPES: Record<string, string> = {
  'ah.bc': 'attitude_history',
  'ap.bc': 'attitude_predict',
  'spin.csv': 'spin',
  spin: 'spin',
};

const EPHEMERIS_TYPES: Record<string, string> = {
  recon: 'ephemeris_reconstructed',
  nom: 'ephemeris_nominal',
  pred: 'ephemeris_predicted',
  '90days': 'ephemeris_90days',
  long: 'ephemeris_long',
  launch: 'ephemeris_launch',
};

/** Why an ephemeris word is none of the table's, or undefined when it is one. */
function ephemerisProblem(word: string): string | undefined {
  if (Object.hasOwn(EPHEMERIS_TYPES, word)) return undefined;
  const known = Object.keys(EPHEMERIS_TYPES);
  const lower = known.includes(word.toLowerCase()) ? '; the ephemeris type is written in lower case' : '';
  return `${JSON.stringify(word)} is not an ephemeris type (${known.join(', ')})${lower}`;
}

/** Constant kernels: their prefix's type and the one extension it comes with. */
const CONSTANT_TYPES: Record<string, { type: string; extension: string }> = {
  L1_de: { type: 'lagrange_point', extension: 'bsp' },
  de: { type: 'planetary_ephemeris', extension: 'bsp' },
  pck: { type: 'planetary_constants', extension: 'tpc' },
  naif: { type: 'leapseconds', extension: 'tls' },
  imap_sclk_: { type: 'spacecraft_clock', extension: 'tsc' },
};

const day = (value: string | undefined) =>
  value === undefined ? undefined : { form: 'YYYY_DDD' as const, value };
const date = (value: string | undefined) =>
  value === undefined ? undefined : { form: 'YYYYMMDD' as const, value };
const shortDate = (value: string | undefined) =>
  value === undefined ? undefined : { form: 'YYMMDD' as const, value };

/** The patterns, in the order they are tried (the sheet's numbering). */
const SPICE_PATTERNS: readonly SpicePattern[] = [
  {
    pattern: new RegExp(`^${IMAP}${DAY_OF_YEAR}_${DAY_OF_YEAR}_(\\d+)\\.(ah\\.bc|ap\\.bc|spin\\.csv|spin)$`),
    read: (m) => ({
      type: SUFFIX_TYPES[m[4] as string] as string,
      start: day(m[1]),
      end: day(m[2]),
      version: m[3] as string,
    }),
  },
  {
    pattern: new RegExp(`^${IMAP}dps_${DAY_OF_YEAR}_${DAY_OF_YEAR}_(\\d+)\\.ah\\.bc$`),
    read: (m) => ({ type: 'pointing_attitude', start: day(m[1]), end: day(m[2]), version: m[3] as string }),
  },
  {
    pattern: new RegExp(`^${IMAP}${DAY_OF_YEAR}_(\\d+)\\.(repoint\\.csv|repoint)$`),
    read: (m) => ({ type: 'repoint', start: day(m[1]), version: m[2] as string }),
  },
  {
    pattern: new RegExp(
      `^${IMAP}([A-Za-z0-9-]+)_(?:${anyCase('od')}\\d{3}_)?(\\d{8})_(\\d{8})(?:${anyCase('_v')}(\\d*))?${anyCase('.bsp')}$`,
    ),
    read: (m) => ({
      type: EPHEMERIS_TYPES[m[1] as string] ?? '',
      problem: ephemerisProblem(m[1] as string),
      start: date(m[2]),
      end: date(m[3]),
      version: m[4] ?? '',
    }),
  },
  {
    pattern: /^(L1_de|de|pck|naif|imap_sclk_)(\d+)\.([A-Za-z]+)$/,
    read: (m) => {
      const constant = CONSTANT_TYPES[m[1] as string] as { type: string; extension: string };
      const extension = (m[3] as string).toLowerCase();
      return {
        type: constant.type,
        problem:
          extension === constant.extension
            ? undefined
            : `a ${constant.type} kernel (${m[1]}…) has the extension ${constant.extension}, not ${m[3]}`,
        version: m[2] as string,
      };
    },
  },
  {
    pattern: new RegExp(`^${IMAP}(\\d+)\\.tf$`),
    read: (m) => ({ type: 'imap_frames', version: m[1] as string }),
  },
  {
    pattern: new RegExp(`^${IMAP}${DAY_OF_YEAR}_${DAY_OF_YEAR}_([A-Za-z0-9_-]+)_(\\d{2})\\.sff$`),
    read: (m) => ({ type: 'thruster', start: day(m[1]), end: day(m[2]), version: m[4] as string }),
  },
  {
    pattern: /^imap_sdc_metakernel_(\d{4})_v(\d{3})\.tm$/,
    read: (m) => ({
      type: 'metakernel',
      start: date(`${m[1]}0101`),
      end: date(`${m[1]}1231`),
      version: m[2] as string,
    }),
  },
  {
    pattern: new RegExp(`^${IMAP}${DAY_OF_YEAR}_${anyCase('a')}(\\d{2})${anyCase('.spice.')}mk$`),
    read: (m) => ({ type: 'metakernel', start: day(m[1]), version: m[2] as string }),
  },
  {
    pattern: new RegExp(`^${IMAP}${DAY_OF_YEAR}_${anyCase('e')}(\\d{2})\\.mk$`),
    read: (m) => ({ type: 'metakernel', start: day(m[1]), version: m[2] as string }),
  },
  {
    pattern: new RegExp(`^${IMAP}science_(\\d+)\\.tf$`),
    read: (m) => ({ type: 'science_frames', version: m[1] as string }),
  },
  {
    pattern: new RegExp(`^${anyCase('earth_')}(\\d{6})_(\\d{6})_(\\d{6})\\.bpc$`),
    read: (m) => ({
      type: 'earth_attitude',
      start: shortDate(m[1]),
      end: shortDate(m[2]),
      version: m[3] as string,
    }),
  },
];

/** `YYYYMMDD` of a date in any of the forms kernel names use; undefined when that day does not exist. */
function calendarDay(written: { form: DateForm; value: string }): string | undefined {
  if (written.form === 'YYYYMMDD') return isCalendarDate(written.value) ? written.value : undefined;
  if (written.form === 'YYMMDD') {
    const full = `20${written.value}`;
    return isCalendarDate(full) ? full : undefined;
  }
  const [yearText, dayText] = written.value.split('_') as [string, string];
  const year = Number(yearText);
  let remaining = Number(dayText);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (year < 1 || remaining < 1 || remaining > (leap ? 366 : 365)) return undefined;
  const monthLengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  let month = 0;
  while (remaining > (monthLengths[month] as number)) {
    remaining -= monthLengths[month] as number;
    month += 1;
  }
  return `${yearText}${String(month + 1).padStart(2, '0')}${String(remaining).padStart(2, '0')}`;
}

/** What is wrong with a date written in a kernel's name, or undefined when it is a real day. */
function dateProblem(written: { form: DateForm; value: string }): string | undefined {
  if (calendarDay(written) !== undefined) return undefined;
  return written.form === 'YYYY_DDD'
    ? `${written.value} is no day of its year (YYYY_DDD: day of year 001-365, 366 in a leap year)`
    : `${written.value} is not a date of the calendar (${written.form})`;
}

/**
 * Reads a SPICE kernel's name: the kernel when a pattern fits and its type and dates are right; a refusal
 * when the first pattern that fits finds them wrong (no later pattern is tried); undefined when no pattern fits.
 */
export function readSpiceName(name: string): SpiceFile | Refusal | undefined {
  for (const { pattern, read } of SPICE_PATTERNS) {
    const match = pattern.exec(name);
    if (!match) continue;
    const parts = read(match);
    const problems: string[] = parts.problem === undefined ? [] : [parts.problem];
    for (const written of [parts.start, parts.end]) {
      const problem = written ? dateProblem(written) : undefined;
      if (problem) problems.push(problem);
    }
    if (problems.length > 0 || !isSpiceKernelType(parts.type))
      return { refused: 'spice', problems, extensionFits: true };
    const folder = SPICE_KERNEL_TYPES[parts.type];
    const dot = name.lastIndexOf('.');
    return {
      kind: 'spice',
      generation: 'today',
      mission: MISSION,
      kernelType: parts.type,
      folder,
      startDate: parts.start ? calendarDay(parts.start) : undefined,
      endDate: parts.end ? calendarDay(parts.end) : undefined,
      version: parts.version,
      extension: name.slice(dot + 1),
      name,
      path: [MISSION, 'spice', folder, name].join('/'),
    };
  }
  return undefined;
}

/**
 * What makes two kernels versions of one another: the type and the name with its version digits taken out
 * (`naif0011.tls` and `naif0012.tls` are one series; two predicted ephemerides of different spans are two).
 */
export function spiceSeries(file: SpiceFile): string {
  const stem =
    file.version === '' ? file.name : file.name.replace(new RegExp(`${file.version}(?=[^0-9]*$)`), '#');
  return `${file.kernelType}:${stem}`;
}
