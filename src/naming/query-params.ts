/**
 * Query parameters from the vocabulary's table: the names the service accepts, each value checked as the client
 * reports it or as the service words it, filters mapped to parameters (`/query`'s and `/spice-query`'s), and the
 * filters that apply to each table.
 */
import { ValidationError } from '../core/errors.js';
import { reversedRanges } from './date-ranges.js';
import {
  FILTER_NAMES,
  type FilterSpec,
  QUERY_FILTERS,
  QUERY_TABLES,
  type QueryFilters,
  type QueryParameter,
  type QueryParams,
  type QueryTable,
  type Vocabulary,
} from './query-vocabulary.js';

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

/**
 * The parameters of `GET /spice-query`, as today's client sends them: the ingestion days renamed
 * (`start_ingest_date`, `end_ingest_date`), no `table`, and `latest=true` for the newest version.
 */
export const SPICE_QUERY_PARAMETERS: readonly string[] = [
  ...(QUERY_FILTERS as readonly FilterSpec[])
    .filter((filter) => filter.name !== 'table' && filterTables(filter).includes('spice'))
    .map((filter) => filter.spiceParameter ?? filter.parameter),
  'latest',
];

/**
 * The search of `GET /spice-query` for checked query parameters (by their `/query` names): `table` left out, the
 * ingestion days under their SPICE names, and `version=latest` as `latest=true`, as today's client sends it.
 */
export function spiceQuerySearch(params: URLSearchParams): URLSearchParams {
  const search = new URLSearchParams();
  for (const [name, value] of params) {
    if (name === 'table') continue;
    if (name === 'version' && value === 'latest') continue;
    search.append(BY_PARAMETER.get(name)?.spiceParameter ?? name, value);
  }
  if (params.get('version') === 'latest') search.set('latest', 'true');
  return search;
}

/** The tables a filter applies to. */
export function filterTables(filter: FilterSpec): readonly QueryTable[] {
  return filter.tables ?? ['science', 'ancillary'];
}

/** The table a query searches: `science` unless it names another. */
function tableOf(value: unknown): QueryTable {
  return (QUERY_TABLES as readonly unknown[]).includes(value) ? (value as QueryTable) : 'science';
}

/** Why a filter cannot be given with a table, or undefined when it applies there. */
function tableProblem(filter: FilterSpec, table: QueryTable): string | undefined {
  const tables = filterTables(filter);
  if (filter.name === 'table' || tables.includes(table)) return undefined;
  return `The ${filter.parameter} filter does not apply to the ${table} table (it applies to ${tables.join(', ')}).`;
}

/** Checks one query parameter's value; the message saying what is wrong, or undefined when it is valid. */
export function queryValueProblem(
  parameter: QueryParameter,
  value: string,
  table: QueryTable = 'science',
  vocabulary: Vocabulary = 'any',
): string | undefined {
  return BY_PARAMETER.get(parameter)?.problem(value, table, vocabulary);
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
 * Maps filters to service parameters, checking every value and that it applies to the table searched; throws a
 * `ValidationError` listing each bad value (and each unknown filter name a JavaScript caller may pass), in the
 * order of the table. Values are sent in the form the service takes (`repoint00042` as `42`).
 */
export function toQueryParams(filters: QueryFilters): QueryParams {
  const problems: string[] = [];
  const params: Record<string, string> = {};
  const table = tableOf(filters.table);
  for (const filter of QUERY_FILTERS as readonly FilterSpec[]) {
    const value: unknown = filters[filter.name];
    if (value === undefined) continue;
    if (typeof value !== 'string') {
      problems.push(`The ${filter.name} filter must be a string.`);
      continue;
    }
    const problem =
      tableProblem(filter, table) ?? clientValueProblem(filter.parameter as QueryParameter, value, table);
    if (problem) problems.push(problem);
    else params[filter.parameter] = filter.sent ? filter.sent(value) : value;
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
 * listing each unknown name, bad value and filter that does not apply to the table.
 */
export function checkQueryParams(params: Readonly<Record<string, string | undefined>>): URLSearchParams {
  const search = new URLSearchParams();
  const problems: string[] = [];
  const table = tableOf(params.table);
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (!isQueryParameter(name)) {
      problems.push(unknownQueryParameterMessage(name));
      continue;
    }
    const filter = BY_PARAMETER.get(name) as FilterSpec;
    const problem = tableProblem(filter, table) ?? clientValueProblem(name, value, table);
    if (problem) problems.push(problem);
    search.set(name, filter.sent ? filter.sent(value) : value);
  }
  problems.push(...reversedRanges(params));
  if (problems.length > 0) throw new ValidationError(problems);
  return search;
}
