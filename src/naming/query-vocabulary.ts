/**
 * The query vocabulary, declared once: each filter's library name, service parameter, command-line flag,
 * help and value check, and the record a query answers with. The command line declares its options from
 * this table, the client builds its parameters from it and the reference server parses them with it.
 */

import { ValidationError } from '../core/errors.js';
import { reversedRanges } from './date-ranges.js';
import { didYouMean } from './did-you-mean.js';
import {
  ANCILLARY_EXTENSIONS,
  DATA_LEVELS,
  INSTRUMENTS,
  isDataLevel,
  isInstrument,
  SCIENCE_EXTENSIONS,
} from './mission.js';
import { calendarDateProblem, isCalendarDate, isDescriptor, isVersion, messages } from './name-parts.js';
import { unsafePathReason } from './path-safety.js';

/** Tables the query can search. */
export const QUERY_TABLES = ['science', 'ancillary'] as const;
export type QueryTable = (typeof QUERY_TABLES)[number];

/** Filters of a query, by their library names; each maps to one service parameter. */
export interface QueryFilters {
  /** `science` (default) or `ancillary`. */
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
  /** `vXX-YY`, or `latest` for the most recent version of each file. */
  version?: string | undefined;
  extension?: string | undefined;
  /** The storage path of one file. */
  filePath?: string | undefined;
}

/** A filter's library name. */
export type FilterName = keyof QueryFilters;

/** One record of `GET /query`, as the service sends it (unknown extra fields are kept). */
export interface QueryRecord {
  file_path: string;
  instrument: string;
  /** Absent in ancillary records. */
  data_level?: string | undefined;
  descriptor: string;
  start_date: string;
  /** Present in the service's example answer, absent in older clients' samples; null for single-date ancillary files. */
  end_date?: string | null | undefined;
  version: string;
  extension: string;
  /** `YYYY-MM-DD HH:MM:SS` (UTC). */
  ingestion_date?: string | undefined;
}

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
  /** What is wrong with `value` (the table searched decides valid extensions), as the service words it; undefined when valid. */
  problem(value: string, table: QueryTable): string | undefined;
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
    choices: INSTRUMENTS,
    inSpecList: true,
    problem: (value) => (isInstrument(value) ? undefined : messages.instrument),
    explain: suggestFrom(() => INSTRUMENTS, 'instruments'),
  },
  {
    name: 'dataLevel',
    parameter: 'data_level',
    flag: '--data-level <level>',
    help: 'data level, e.g. l1a',
    choices: DATA_LEVELS,
    inSpecList: true,
    problem: (value) => (isDataLevel(value) ? undefined : messages.dataLevel),
    explain: suggestFrom(() => DATA_LEVELS, 'data levels'),
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
    help: 'files starting on or after this date',
    inSpecList: true,
    problem: dateProblem('start_date'),
    explain: explainDate('start_date'),
  },
  {
    name: 'endDate',
    parameter: 'end_date',
    flag: '--end-date <YYYYMMDD>',
    help: 'files starting on or before this date',
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
    problem: dateProblem('ingestion_start_date'),
    explain: explainDate('ingestion_start_date'),
  },
  {
    name: 'ingestionEndDate',
    parameter: 'ingestion_end_date',
    flag: '--ingestion-end-date <YYYYMMDD>',
    help: 'files ingested on or before this day (UTC)',
    inSpecList: false,
    problem: dateProblem('ingestion_end_date'),
    explain: explainDate('ingestion_end_date'),
  },
  {
    name: 'version',
    parameter: 'version',
    flag: '--version <version>',
    help: "file version vXX-YY, or 'latest'",
    inSpecList: true,
    problem: (value) =>
      value === 'latest' || isVersion(value)
        ? undefined
        : `Invalid version ${JSON.stringify(value)}. Please use vxx-xx format or latest.`,
    // `LATEST` or `V01-00`: the value in lower case is valid, so say so.
    explain: (value, _table, problem) => {
      const lower = value.toLowerCase();
      const suggestion =
        lower === 'latest' || isVersion(lower) ? didYouMean(value, [lower], 'versions') : undefined;
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
] as const satisfies readonly FilterSpec[];

/** A service query parameter. */
export type QueryParameter = (typeof QUERY_FILTERS)[number]['parameter'];

/** Query parameters, by their service names. */
export type QueryParams = Partial<Record<QueryParameter, string>>;

/** The filter names, `table` first. */
export const FILTER_NAMES: readonly FilterName[] = QUERY_FILTERS.map((filter) => filter.name);

const BY_NAME = new Map<string, FilterSpec>(QUERY_FILTERS.map((filter) => [filter.name, filter]));
const BY_PARAMETER = new Map<string, FilterSpec>(QUERY_FILTERS.map((filter) => [filter.parameter, filter]));

/**
 * Query parameters the service accepts, in the order its messages list them: `file_path` and the others of the
 * specification's list, then those added since.
 */
export const QUERY_PARAMETERS: readonly QueryParameter[] = [
  'file_path',
  ...QUERY_FILTERS.filter((filter) => filter.inSpecList && filter.name !== 'filePath').map(
    (filter) => filter.parameter,
  ),
  ...QUERY_FILTERS.filter((filter) => !filter.inSpecList).map((filter) => filter.parameter),
];

/** True when `name` is a query parameter the service accepts. */
export function isQueryParameter(name: string): name is QueryParameter {
  return BY_PARAMETER.has(name);
}

/** The service's message for a parameter it does not know. */
export function unknownQueryParameterMessage(name: string): string {
  return `${name} is not a valid query parameter. Valid query parameters are: ${QUERY_PARAMETERS.join(', ')}`;
}

/** Checks one query parameter's value; the message saying what is wrong, or undefined when it is valid. */
export function queryValueProblem(
  parameter: QueryParameter,
  value: string,
  table: QueryTable = 'science',
): string | undefined {
  return BY_PARAMETER.get(parameter)?.problem(value, table);
}

/**
 * Checks one value as the client reports it: the service's message, completed with a did-you-mean or why a
 * date is impossible. Undefined when the value is valid.
 */
export function clientValueProblem(
  parameter: QueryParameter,
  value: string,
  table: QueryTable = 'science',
): string | undefined {
  const filter = BY_PARAMETER.get(parameter);
  const problem = filter?.problem(value, table);
  return problem && filter?.explain ? filter.explain(value, table, problem) : problem;
}

/** True when at least one filter other than `table` is given. */
export function hasFilter(filters: QueryFilters): boolean {
  return FILTER_NAMES.some((name) => name !== 'table' && filters[name] !== undefined && filters[name] !== '');
}

/**
 * Maps filters to service parameters, checking every value; throws a `ValidationError` listing each bad value
 * (and each unknown filter name a JavaScript caller may pass), in the order of the table.
 */
export function toQueryParams(filters: QueryFilters): QueryParams {
  const problems: string[] = [];
  const params: Record<string, string> = {};
  const table: QueryTable = filters.table === 'ancillary' ? 'ancillary' : 'science';
  for (const filter of QUERY_FILTERS) {
    const value: unknown = filters[filter.name];
    if (value === undefined) continue;
    if (typeof value !== 'string') {
      problems.push(`The ${filter.name} filter must be a string.`);
      continue;
    }
    const problem = clientValueProblem(filter.parameter, value, table);
    if (problem) problems.push(problem);
    else params[filter.parameter] = value;
  }
  for (const name of Object.keys(filters)) {
    if (!BY_NAME.has(name)) {
      problems.push(`Unknown query filter ${JSON.stringify(name)}. Filters are: ${FILTER_NAMES.join(', ')}.`);
    }
  }
  problems.push(...reversedRanges(params));
  if (problems.length > 0) throw new ValidationError(problems);
  return params;
}

/**
 * Checks parameters given by their service names (callers of the HTTP client); throws a `ValidationError`
 * listing each unknown name and bad value.
 */
export function checkQueryParams(params: Readonly<Record<string, string | undefined>>): URLSearchParams {
  const search = new URLSearchParams();
  const problems: string[] = [];
  const table: QueryTable = params.table === 'ancillary' ? 'ancillary' : 'science';
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (!isQueryParameter(name)) {
      problems.push(unknownQueryParameterMessage(name));
      continue;
    }
    const problem = clientValueProblem(name, value, table);
    if (problem) problems.push(problem);
    search.set(name, value);
  }
  problems.push(...reversedRanges(params));
  if (problems.length > 0) throw new ValidationError(problems);
  return search;
}
