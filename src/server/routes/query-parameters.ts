/**
 * Reads and checks the parameters of `GET /query` and `GET /spice-query`, with the service's messages, in each
 * dialect: `spec` takes exactly the specification's parameters and words; `today` and `both` also today's
 * filters (`repointing`, `major_version`, `minor_version`), words of both generations, `latest=true` and paging.
 */

import { isCalendarDate } from '../../naming/name-parts.js';
import { QUERY_PARAMETERS, queryValueProblem } from '../../naming/query-params.js';
import {
  type FilterSpec,
  QUERY_FILTERS,
  type QueryParameter,
  type QueryTable,
} from '../../naming/query-vocabulary.js';
import type { Dialect } from '../context.js';
import type { IndexQuery, QueryPage } from '../metadata/metadata-index.js';

/** The most records one page (`limit`) holds. */
export const MAX_QUERY_LIMIT = 10_000;

/** Parameters today's service added to the specification's: `latest=true` and paging. */
const TODAY_PARAMETERS = ['latest', 'offset', 'limit'] as const;

function isTodayParameter(name: string): boolean {
  return (TODAY_PARAMETERS as readonly string[]).includes(name);
}

const FILTERS = QUERY_FILTERS as readonly FilterSpec[];

/**
 * Today's filters of `/query` (`repointing`, `major_version`, `minor_version`): the vocabulary's `todayOnly`
 * ones, but `type`, which only `/spice-query` takes.
 */
const TODAY_FILTERS: readonly string[] = FILTERS.filter(
  (filter) => filter.todayOnly && (filter.tables ?? []).some((table) => table !== 'spice'),
).map((filter) => filter.parameter);

/** The tables `/query` searches: SPICE kernels are asked at `/spice-query`; the other kinds are not queried. */
const QUERY_ROUTE_TABLES: readonly QueryTable[] = ['science', 'ancillary'];

/** The query parameters a dialect accepts, in the order its messages list them. */
export function queryParametersOf(dialect: Dialect): readonly string[] {
  // Filtered rather than copied, so the list stays right if the shared vocabulary learns these names too.
  const specification = QUERY_PARAMETERS.filter(
    (name) => !isTodayParameter(name) && !FILTERS.find((filter) => filter.parameter === name)?.todayOnly,
  );
  return dialect === 'spec' ? specification : [...specification, ...TODAY_FILTERS, ...TODAY_PARAMETERS];
}

/** The message for a parameter the dialect does not know, listing those it does. */
export function unknownParameterMessage(name: string, dialect: Dialect): string {
  return `${name} is not a valid query parameter. Valid query parameters are: ${queryParametersOf(dialect).join(', ')}`;
}

/** The answer to a query without parameters (the real service crashed with a 502 on it). */
export function emptyQueryMessage(dialect: Dialect): string {
  return `Give at least one query parameter, e.g. /query?instrument=mag. Valid query parameters are: ${queryParametersOf(dialect).join(', ')}`;
}

/** The answer to `latest` given with `version=latest`. */
export const LATEST_TWICE_MESSAGE =
  'Give either latest=true or version=latest, not both: they ask for the same thing.';

/** The answer to `latest=true` with a `version=vXX-YY`: the real service refuses the pair with a 400. */
export const LATEST_WITH_VERSION_MESSAGE =
  'Give either latest=true or a version, not both: latest=true asks for the most recent version of each file.';

/** The answer of today's service to `version=latest`, which it replaced with `latest=true`. */
export const VERSION_LATEST_REFUSED_MESSAGE =
  'Invalid version "latest": this service takes latest=true for the most recent versions. Please use vNNN.NNNN, vNNN or vxx-xx format.';

/** The answer to `table=spice` at `/query`. */
export const SPICE_TABLE_MESSAGE =
  'The spice table is not searched at /query: ask GET /spice-query (e.g. /spice-query?type=leapseconds) for SPICE kernels.';

/** Either checked filters and page, or the message of the first problem found. */
export type ParsedQuery = { filters: IndexQuery; page: QueryPage | undefined } | { problem: string };

/**
 * `latest=true` (any case, as Python's `True` arrives) asks for the most recent versions and `latest=false`
 * changes nothing; any other value is refused rather than silently read as false, as the real service does.
 */
function latestValue(value: string): boolean | { problem: string } {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  return { problem: `Invalid latest ${JSON.stringify(value)}. Please use true or false.` };
}

/** A whole number within `min..max`, or the message saying why `value` is not one. */
function wholeNumber(
  name: string,
  value: string,
  min: number,
  max: number,
  range: string,
): number | { problem: string } {
  const start = `Invalid ${name} ${JSON.stringify(value)}`;
  const advice = `Please use a whole number${range}.`;
  if (!/^-?\d+$/.test(value)) return { problem: `${start}: it is not a whole number. ${advice}` };
  const number = Number(value);
  if (number < 0) return { problem: `${start}: it is negative. ${advice}` };
  if (number < min) return { problem: `${start}: a page holds at least ${min} record. ${advice}` };
  if (number > max) {
    return {
      problem:
        name === 'limit'
          ? `${start}: a page holds at most ${max} records. ${advice} Page through more with offset.`
          : `${start}: it is too large. ${advice}`,
    };
  }
  return number;
}

/** The first name not among `accepted`, or given twice: the message saying so; undefined when none. */
function namesProblem(
  names: readonly string[],
  accepted: readonly string[],
  unknown: (name: string) => string,
): string | undefined {
  const stranger = names.find((name) => !accepted.includes(name));
  if (stranger !== undefined) return unknown(stranger);
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return `The query parameter ${name} is given more than once; give it once.`;
    seen.add(name);
  }
  return undefined;
}

/** The table `/query` is asked to search, or why not: the specification's words in `spec`. */
function tableOf(value: string, dialect: Dialect): QueryTable | { problem: string } {
  if ((QUERY_ROUTE_TABLES as readonly string[]).includes(value)) return value as QueryTable;
  if (value === 'spice' && dialect !== 'spec') return { problem: SPICE_TABLE_MESSAGE };
  const problem = `Invalid table ${JSON.stringify(value)}. Please choose from ${QUERY_ROUTE_TABLES.join(', ')}`;
  return { problem: dialect === 'spec' ? problem : `${problem} (SPICE kernels: GET /spice-query)` };
}

/** The message of a bad filter value, in the dialect's words; undefined when the value is valid. */
function filterProblem(name: QueryParameter, value: string, table: QueryTable, dialect: Dialect) {
  const filter = FILTERS.find((candidate) => candidate.parameter === name);
  const tables = filter?.tables ?? QUERY_ROUTE_TABLES;
  if (!tables.includes(table)) {
    return `The ${name} filter does not apply to the ${table} table (it applies to ${tables.join(', ')}).`;
  }
  // Today's service dropped `version=latest` for `latest=true`; playing it alone, refuse the old form.
  if (name === 'version' && value === 'latest' && dialect === 'today') return VERSION_LATEST_REFUSED_MESSAGE;
  const problem = queryValueProblem(name, value, table, dialect === 'spec' ? 'spec' : 'any');
  return dialect === 'today' ? problem?.replace(', or latest.', '.') : problem;
}

/** The value an index compares: today's whole numbers as plain numbers (`repoint00042` and `042` are 42). */
function indexValue(name: QueryParameter, value: string): string {
  return TODAY_FILTERS.includes(name) ? String(Number(value.replace(/^repoint/, ''))) : value;
}

/** `offset` and `limit`: the page asked for, none when neither is given, or the message of a bad value. */
function pageOf(search: URLSearchParams): QueryPage | undefined | { problem: string } {
  const offsetValue = search.get('offset');
  const limitValue = search.get('limit');
  if (offsetValue === null && limitValue === null) return undefined;
  const page: QueryPage = { offset: 0 };
  if (offsetValue !== null) {
    const offset = wholeNumber('offset', offsetValue, 0, Number.MAX_SAFE_INTEGER, ', 0 or more');
    if (typeof offset !== 'number') return offset;
    page.offset = offset;
  }
  if (limitValue !== null) {
    const limit = wholeNumber('limit', limitValue, 1, MAX_QUERY_LIMIT, ` from 1 to ${MAX_QUERY_LIMIT}`);
    if (typeof limit !== 'number') return limit;
    page.limit = limit;
  }
  return page;
}

/** Adds `latest` to `filters`, or the message of a bad value or of a second way of asking for the latest. */
function latestProblem(search: URLSearchParams, filters: IndexQuery): string | undefined {
  const latest = search.get('latest');
  if (latest === null) return undefined;
  const parsed = latestValue(latest);
  if (typeof parsed !== 'boolean') return parsed.problem;
  if (filters.version === 'latest') return LATEST_TWICE_MESSAGE;
  if (parsed && filters.version !== undefined) return LATEST_WITH_VERSION_MESSAGE;
  if (parsed) filters.latest = true;
  return undefined;
}

/** Either the page of a search, or the problem with it. */
function withPage(search: URLSearchParams, filters: IndexQuery): ParsedQuery {
  const page = pageOf(search);
  return page !== undefined && 'problem' in page ? page : { filters, page };
}

/**
 * Checks a query string against the dialect: every name must be one it accepts, given once, with a valid
 * value. Problems are reported in this order: an unknown name, a repeated name, then bad values (the
 * filters in the vocabulary's order, then `latest`, `offset`, `limit`).
 */
export function parseQueryParameters(search: URLSearchParams, dialect: Dialect = 'both'): ParsedQuery {
  const names = [...search.keys()];
  if (names.length === 0) return { problem: emptyQueryMessage(dialect) };
  const accepted = queryParametersOf(dialect);
  const namesWrong = namesProblem(names, accepted, (name) => unknownParameterMessage(name, dialect));
  if (namesWrong) return { problem: namesWrong };
  const table = tableOf(search.get('table') ?? 'science', dialect);
  if (typeof table !== 'string') return table;
  const filters: IndexQuery = { table };
  for (const name of QUERY_PARAMETERS) {
    const value = search.get(name);
    if (value === null || name === 'table' || !accepted.includes(name)) continue;
    const problem = filterProblem(name, value, table, dialect);
    if (problem) return { problem };
    filters[name as Exclude<QueryParameter, 'table'>] = indexValue(name, value);
  }
  const latest = latestProblem(search, filters);
  return latest ? { problem: latest } : withPage(search, filters);
}

/**
 * The parameters of `GET /spice-query`, as today's client sends them, each with its name in the index's query
 * (the ingestion days are named apart from `/query`'s), then `latest` and paging.
 */
const SPICE_PARAMETERS: ReadonlyArray<readonly [parameter: string, index: QueryParameter]> = [
  ['type', 'type'],
  ['start_date', 'start_date'],
  ['end_date', 'end_date'],
  ['start_ingest_date', 'ingestion_start_date'],
  ['end_ingest_date', 'ingestion_end_date'],
  ['version', 'version'],
];

/** The names `/spice-query` accepts, in the order its messages list them. */
export const SPICE_QUERY_PARAMETER_NAMES: readonly string[] = [
  ...SPICE_PARAMETERS.map(([parameter]) => parameter),
  ...TODAY_PARAMETERS,
];

/** The message for a parameter `/spice-query` does not know, listing those it does. */
export function unknownSpiceParameterMessage(name: string): string {
  return `${name} is not a valid spice-query parameter. Valid spice-query parameters are: ${SPICE_QUERY_PARAMETER_NAMES.join(', ')}`;
}

/** What is wrong with one `/spice-query` value, in its own parameter's name; undefined when valid. */
function spiceValueProblem(parameter: string, index: QueryParameter, value: string): string | undefined {
  if (index === 'type') return queryValueProblem('type', value, 'spice');
  if (index === 'version') {
    return /^v?\d+$/.test(value)
      ? undefined
      : `Invalid version ${JSON.stringify(value)}. A kernel's version is its digits (e.g. 0012); ask latest=true for the newest.`;
  }
  return isCalendarDate(value)
    ? undefined
    : `Invalid ${parameter} ${JSON.stringify(value)}. Please use YYYYMMDD format.`;
}

/**
 * Checks the query string of `/spice-query` (today's service's, in `today` and `both`): every name one it
 * accepts, given once, with a valid value; no parameter at all lists every kernel.
 */
export function parseSpiceQueryParameters(search: URLSearchParams): ParsedQuery {
  const names = [...search.keys()];
  const namesWrong = namesProblem(names, SPICE_QUERY_PARAMETER_NAMES, unknownSpiceParameterMessage);
  if (namesWrong) return { problem: namesWrong };
  const filters: IndexQuery = { table: 'spice' };
  for (const [parameter, index] of SPICE_PARAMETERS) {
    const value = search.get(parameter);
    if (value === null) continue;
    const problem = spiceValueProblem(parameter, index, value);
    if (problem) return { problem };
    filters[index as Exclude<QueryParameter, 'table'>] = value;
  }
  const latest = latestProblem(search, filters);
  return latest ? { problem: latest } : withPage(search, filters);
}
