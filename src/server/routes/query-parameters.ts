/** Reads and checks the parameters of `GET /query`, with the service's messages, in each dialect. */

import type { QueryTable } from '../../naming/query-vocabulary.js';
import { QUERY_PARAMETERS, type QueryParameter, queryValueProblem } from '../../naming/query-vocabulary.js';
import type { Dialect } from '../context.js';
import type { IndexQuery, QueryPage } from '../metadata/metadata-index.js';

/** The most records one page (`limit`) holds. */
export const MAX_QUERY_LIMIT = 10_000;

/** Parameters today's service added to the specification's: `latest=true` and paging. */
const TODAY_PARAMETERS = ['latest', 'offset', 'limit'] as const;

function isTodayParameter(name: string): boolean {
  return (TODAY_PARAMETERS as readonly string[]).includes(name);
}

/** The query parameters a dialect accepts, in the order its messages list them. */
export function queryParametersOf(dialect: Dialect): readonly string[] {
  // Filtered rather than copied, so the list stays right if the shared vocabulary learns these names too.
  const specification = QUERY_PARAMETERS.filter((name) => !isTodayParameter(name));
  return dialect === 'spec' ? specification : [...specification, ...TODAY_PARAMETERS];
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
  'Invalid version "latest": this service takes latest=true for the most recent versions. Please use vxx-xx format.';

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

/**
 * Checks a query string against the dialect: every name must be one it accepts, given once, with a valid
 * value. Problems are reported in this order: an unknown name, a repeated name, then bad values (the
 * filters in the vocabulary's order, then `latest`, `offset`, `limit`).
 */
export function parseQueryParameters(search: URLSearchParams, dialect: Dialect = 'both'): ParsedQuery {
  const names = [...search.keys()];
  if (names.length === 0) return { problem: emptyQueryMessage(dialect) };
  const accepted = queryParametersOf(dialect);
  const unknown = names.find((name) => !accepted.includes(name));
  if (unknown !== undefined) return { problem: unknownParameterMessage(unknown, dialect) };
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name))
      return { problem: `The query parameter ${name} is given more than once; give it once.` };
    seen.add(name);
  }
  const tableValue = search.get('table') ?? 'science';
  const tableProblem = queryValueProblem('table', tableValue);
  if (tableProblem) return { problem: tableProblem };
  const table = tableValue as QueryTable;
  const filters: IndexQuery = { table };
  for (const name of QUERY_PARAMETERS) {
    const value = search.get(name);
    if (value === null || name === 'table' || isTodayParameter(name)) continue;
    // Today's service dropped `version=latest` for `latest=true`; playing it alone, refuse the old form.
    if (name === 'version' && value === 'latest' && dialect === 'today')
      return { problem: VERSION_LATEST_REFUSED_MESSAGE };
    const problem = queryValueProblem(name, value, table);
    if (problem) return { problem };
    filters[name as Exclude<QueryParameter, 'table'>] = value;
  }
  const latest = search.get('latest');
  if (latest !== null) {
    const parsed = latestValue(latest);
    if (typeof parsed !== 'boolean') return parsed;
    if (filters.version === 'latest') return { problem: LATEST_TWICE_MESSAGE };
    if (parsed && filters.version !== undefined) return { problem: LATEST_WITH_VERSION_MESSAGE };
    if (parsed) filters.latest = true;
  }
  const offsetValue = search.get('offset');
  const limitValue = search.get('limit');
  if (offsetValue === null && limitValue === null) return { filters, page: undefined };
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
  return { filters, page };
}
