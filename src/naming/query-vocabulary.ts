import { didYouMean } from './did-you-mean.js';
import {
  ANCILLARY_EXTENSIONS,
  ANY_DATA_LEVELS,
  ANY_INSTRUMENTS,
  DATA_LEVELS,
  INSTRUMENTS,
  SCIENCE_EXTENSIONS,
} from './mission.js';
import { calendarDateProblem, isCalendarDate, isDescriptor, isVersion, messages } from './name-parts.js';
import { unsafePathReason } from './path-safety.js';
import { SPICE_TYPES } from './spice.js';
import { isTodayVersion } from './versions.js';

/** Tables the query can search: `spice` is today's archive's, asked at `/spice-query`. */
export const QUERY_TABLES = ['science', 'ancillary', 'spice'] as const;
export type QueryTable = (typeof QUERY_TABLES)[number];

/**
 * Which words a value is checked against: `any` takes both generations' (a client, today's service), `spec`
 * only the specification's, with its messages (the reference server playing the specification's service).
 */
export type Vocabulary = 'spec' | 'any';

/** The message for an instrument of neither generation (the specification's words when it plays that service). */
function instrumentMessage(vocabulary: Vocabulary): string {
  return vocabulary === 'spec'
    ? messages.instrument
    : `Invalid instrument. Please choose from ${ANY_INSTRUMENTS.join(', ')}`;
}

function dataLevelMessage(vocabulary: Vocabulary): string {
  return vocabulary === 'spec'
    ? messages.dataLevel
    : `Invalid data level. Please choose from ${ANY_DATA_LEVELS.join(', ')}`;
}

/** A repointing as the service takes it: a whole number; `repoint00042` and `00042` are read as 42. */
export function repointingNumber(value: string): number | undefined {
  const match = /^(?:repoint)?(\d{1,5})$/.exec(value);
  return match ? Number(match[1]) : undefined;
}

/** Filters of a query, by their library names; each maps to one service parameter. */
export interface QueryFilters {
  /** `science` (default), `ancillary`, or `spice` (today's SPICE kernels, asked at `/spice-query`). */
  table?: QueryTable | undefined;
  instrument?: string | undefined;
  dataLevel?: string | undefined;
  descriptor?: string | undefined;
  /** `YYYYMMDD`: files starting on or after this date. */
  startDate?: string | undefined;
  /** `YYYYMMDD`: files starting on or before this date. */
  endDate?: string | undefined;
  /** `YYYYMMDD`: files ingested on or after this day (UTC). */
  ingestionStartDate?: string | undefined;
  /** `YYYYMMDD`: files ingested on or before this day (UTC). */
  ingestionEndDate?: string | undefined;
  /** `vXX-YY`, `vNNN`, `vNNN.NNNN`, or `latest` for the most recent version of each file. */
  version?: string | undefined;
  extension?: string | undefined;
  /** The storage path of one file. */
  filePath?: string | undefined;
  /** Today's repointing number (`42`, `00042` or `repoint00042`); sent as a whole number. */
  repointing?: string | undefined;
  /** Today's major version, digits (`1` or `001`). */
  majorVersion?: string | undefined;
  /** Today's minor version, digits. */
  minorVersion?: string | undefined;
  /** A SPICE kernel type (table `spice` only), e.g. `leapseconds`. */
  kernelType?: string | undefined;
}

/** A filter's library name. */
export type FilterName = keyof QueryFilters;

/** One filter: its names in each place, and the check of its values. */
export interface FilterSpec<Name extends FilterName = FilterName> {
  name: Name;
  /** The service's query parameter. */
  parameter: string;
  /** The command line's flag, with its value placeholder. */
  flag: string;
  help: string;
  /** The fixed set of values, where there is one. */
  choices?: readonly string[];
  /** Listed in the specification's message of valid parameters (the others came later). */
  inSpecList: boolean;
  /** A parameter of today's service only: the specification's service refuses it. */
  todayOnly?: boolean;
  /** The tables the filter applies to; every table but `spice` when absent. */
  tables?: readonly QueryTable[];
  /** The value as it is sent, when the service takes another form than the one given (`repoint00042` → `42`). */
  sent?(value: string): string;
  /** The parameter's name at `/spice-query`, where it differs from `parameter` (the ingestion days). */
  spiceParameter?: string;
  /**
   * What is wrong with `value` (the table searched decides valid extensions), as the service words it, with the
   * words of `vocabulary` (both generations' by default); undefined when valid.
   */
  problem(value: string, table: QueryTable, vocabulary?: Vocabulary): string | undefined;
  /**
   * The client's wording of a `problem`: the service's message completed with what the client can tell (a
   * did-you-mean, why a date is impossible). The reference server keeps the service's own words.
   */
  explain?(value: string, table: QueryTable, problem: string): string;
}

const dateProblem = (parameter: string) => (value: string) =>
  isCalendarDate(value)
    ? undefined
    : `Invalid ${parameter} ${JSON.stringify(value)}. Please use YYYYMMDD format.`;

/** A date of the right form that no calendar has is called that, instead of being sent back to the form. */
const explainDate = (parameter: string) => (value: string, _table: QueryTable, problem: string) => {
  const why = calendarDateProblem(value);
  return why ? `Invalid ${parameter} ${JSON.stringify(value)}: ${why}.` : problem;
};

/** The service's message, and a did-you-mean after it when some listed value is close. */
const suggestFrom =
  (choices: (table: QueryTable) => readonly string[], plural: string) =>
  (value: string, table: QueryTable, problem: string) => {
    const suggestion = didYouMean(value, choices(table), plural);
    return suggestion ? `${problem.replace(/\.?$/, '.')} ${suggestion}` : problem;
  };

/** Every filter, in the order the command line lists them and messages report their problems. */
export const QUERY_FILTERS = [
  {
    name: 'table',
    parameter: 'table',
    flag: '--table <table>',
    help: 'table to search',
    choices: QUERY_TABLES,
    inSpecList: false,
    problem: (value) =>
      (QUERY_TABLES as readonly string[]).includes(value)
        ? undefined
        : `Invalid table ${JSON.stringify(value)}. Please choose from ${QUERY_TABLES.join(', ')}`,
    explain: suggestFrom(() => QUERY_TABLES, 'tables'),
  },
  {
    name: 'instrument',
    parameter: 'instrument',
    flag: '--instrument <instrument>',
    help: 'instrument, e.g. mag',
    choices: ANY_INSTRUMENTS,
    inSpecList: true,
    problem: (value, _table, vocabulary = 'any') =>
      (vocabulary === 'spec' ? (INSTRUMENTS as readonly string[]) : ANY_INSTRUMENTS).includes(value)
        ? undefined
        : instrumentMessage(vocabulary),
    explain: suggestFrom(() => ANY_INSTRUMENTS, 'instruments'),
  },
  {
    name: 'dataLevel',
    parameter: 'data_level',
    flag: '--data-level <level>',
    help: 'data level, e.g. l1a',
    choices: ANY_DATA_LEVELS,
    inSpecList: true,
    problem: (value, _table, vocabulary = 'any') =>
      (vocabulary === 'spec' ? (DATA_LEVELS as readonly string[]) : ANY_DATA_LEVELS).includes(value)
        ? undefined
        : dataLevelMessage(vocabulary),
    explain: suggestFrom(() => ANY_DATA_LEVELS, 'data levels'),
  },
  {
    name: 'descriptor',
    parameter: 'descriptor',
    flag: '--descriptor <descriptor>',
    help: 'product descriptor',
    inSpecList: true,
    problem: (value) =>
      isDescriptor(value)
        ? undefined
        : `Invalid descriptor ${JSON.stringify(value)}. A descriptor is letters, digits and dashes.`,
  },
  {
    name: 'startDate',
    parameter: 'start_date',
    flag: '--start-date <YYYYMMDD>',
    help: 'files starting on or after this date (SPICE: kernels covering it or later)',
    tables: QUERY_TABLES,
    inSpecList: true,
    problem: dateProblem('start_date'),
    explain: explainDate('start_date'),
  },
  {
    name: 'endDate',
    parameter: 'end_date',
    flag: '--end-date <YYYYMMDD>',
    help: 'files starting on or before this date (SPICE: kernels covering it or earlier)',
    tables: QUERY_TABLES,
    inSpecList: true,
    problem: dateProblem('end_date'),
    explain: explainDate('end_date'),
  },
  {
    name: 'ingestionStartDate',
    parameter: 'ingestion_start_date',
    flag: '--ingestion-start-date <YYYYMMDD>',
    help: 'files ingested on or after this day (UTC)',
    inSpecList: false,
    tables: QUERY_TABLES,
    spiceParameter: 'start_ingest_date',
    problem: dateProblem('ingestion_start_date'),
    explain: explainDate('ingestion_start_date'),
  },
  {
    name: 'ingestionEndDate',
    parameter: 'ingestion_end_date',
    flag: '--ingestion-end-date <YYYYMMDD>',
    help: 'files ingested on or before this day (UTC)',
    inSpecList: false,
    tables: QUERY_TABLES,
    spiceParameter: 'end_ingest_date',
    problem: dateProblem('ingestion_end_date'),
    explain: explainDate('ingestion_end_date'),
  },
  {
    name: 'version',
    parameter: 'version',
    flag: '--version <version>',
    help: "file version vNNN.NNNN, vNNN or vXX-YY, or 'latest'",
    inSpecList: true,
    tables: QUERY_TABLES,
    problem: (value, table, vocabulary = 'any') => {
      if (value === 'latest' || (table !== 'spice' && isVersion(value))) return undefined;
      if (table === 'spice') {
        return /^v?\d+$/.test(value)
          ? undefined
          : `Invalid version ${JSON.stringify(value)}. A kernel's version is its digits (e.g. 0012), or latest.`;
      }
      if (vocabulary === 'any' && isTodayVersion(value)) return undefined;
      return vocabulary === 'spec'
        ? `Invalid version ${JSON.stringify(value)}. Please use vxx-xx format or latest.`
        : `Invalid version ${JSON.stringify(value)}. Please use vNNN.NNNN, vNNN or vxx-xx format, or latest.`;
    },
    // `LATEST` or `V01-00`: the value in lower case is valid, so say so.
    explain: (value, _table, problem) => {
      const lower = value.toLowerCase();
      const suggestion =
        lower === 'latest' || isVersion(lower) || isTodayVersion(lower)
          ? didYouMean(value, [lower], 'versions')
          : undefined;
      return suggestion ? `${problem} ${suggestion}` : problem;
    },
  },
  {
    name: 'extension',
    parameter: 'extension',
    flag: '--extension <extension>',
    help: `${SCIENCE_EXTENSIONS.join(' or ')} (ancillary: ${ANCILLARY_EXTENSIONS.join(', ')})`,
    inSpecList: true,
    problem: (value, table) => {
      const allowed: readonly string[] = table === 'ancillary' ? ANCILLARY_EXTENSIONS : SCIENCE_EXTENSIONS;
      return allowed.includes(value)
        ? undefined
        : `Invalid extension ${JSON.stringify(value)}. Please choose from ${allowed.join(', ')}`;
    },
    explain: suggestFrom(
      (table) => (table === 'ancillary' ? ANCILLARY_EXTENSIONS : SCIENCE_EXTENSIONS),
      'extensions',
    ),
  },
  {
    name: 'filePath',
    parameter: 'file_path',
    flag: '--file-path <path>',
    help: 'storage path of one file',
    inSpecList: true,
    problem: (value) => {
      const reason = unsafePathReason(value);
      return reason ? `Invalid file_path ${JSON.stringify(value)}: ${reason}.` : undefined;
    },
  },
  {
    name: 'repointing',
    parameter: 'repointing',
    flag: '--repointing <number>',
    help: "repointing number of today's science files: 42, 00042 or repoint00042",
    inSpecList: false,
    todayOnly: true,
    tables: ['science'],
    sent: (value) => String(repointingNumber(value) ?? value),
    problem: (value) =>
      repointingNumber(value) === undefined
        ? `Invalid repointing ${JSON.stringify(value)}. Please use a whole number of up to 5 digits (e.g. 42 or repoint00042).`
        : undefined,
  },
  {
    name: 'majorVersion',
    parameter: 'major_version',
    flag: '--major-version <number>',
    help: "major version of today's science files (the 001 of v001.0002)",
    inSpecList: false,
    todayOnly: true,
    tables: ['science'],
    problem: (value) =>
      /^\d{1,3}$/.test(value)
        ? undefined
        : `Invalid major_version ${JSON.stringify(value)}. Please use a whole number of up to 3 digits.`,
  },
  {
    name: 'minorVersion',
    parameter: 'minor_version',
    flag: '--minor-version <number>',
    help: "minor version of today's science files (the 0002 of v001.0002)",
    inSpecList: false,
    todayOnly: true,
    tables: ['science'],
    problem: (value) =>
      /^\d{1,4}$/.test(value)
        ? undefined
        : `Invalid minor_version ${JSON.stringify(value)}. Please use a whole number of up to 4 digits.`,
  },
  {
    name: 'kernelType',
    parameter: 'type',
    flag: '--type <type>',
    help: 'SPICE kernel type (with --table spice), e.g. leapseconds',
    choices: SPICE_TYPES,
    inSpecList: false,
    todayOnly: true,
    tables: ['spice'],
    problem: (value) =>
      (SPICE_TYPES as readonly string[]).includes(value)
        ? undefined
        : `Invalid type ${JSON.stringify(value)}. Please choose from ${SPICE_TYPES.join(', ')}`,
    explain: suggestFrom(() => SPICE_TYPES, 'kernel types'),
  },
] as const satisfies readonly FilterSpec[];

/** A service query parameter. */
export type QueryParameter = (typeof QUERY_FILTERS)[number]['parameter'];

/** Query parameters, by their service names. */
export type QueryParams = Partial<Record<QueryParameter, string>>;

/** The filter names, `table` first. */
export const FILTER_NAMES: readonly FilterName[] = QUERY_FILTERS.map((filter) => filter.name);
