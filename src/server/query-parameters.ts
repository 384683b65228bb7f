/** Reads and checks the parameters of `GET /query`, with the service's messages. */
import {
  isQueryParameter,
  QUERY_PARAMETERS,
  type QueryParameter,
  queryValueProblem,
  unknownQueryParameterMessage,
} from '../naming.js';
import type { QueryFilters, QueryTable } from './metadata-index.js';

/** Either checked filters or the message of the first problem found. */
export type ParsedQuery = { filters: QueryFilters } | { problem: string };

/** The answer to a query without parameters (the real service crashed with a 502 on it). */
export const EMPTY_QUERY_MESSAGE = `Give at least one query parameter, e.g. /query?instrument=mag. Valid query parameters are: ${QUERY_PARAMETERS.join(', ')}`;

/**
 * Checks a query string: every name must be a query parameter, given once, with a valid value.
 * Problems are reported in this order: an unknown name, a repeated name, then bad values.
 */
export function parseQueryParameters(search: URLSearchParams): ParsedQuery {
  const names = [...search.keys()];
  if (names.length === 0) return { problem: EMPTY_QUERY_MESSAGE };
  const unknown = names.find((name) => !isQueryParameter(name));
  if (unknown !== undefined) return { problem: unknownQueryParameterMessage(unknown) };
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
  const filters: QueryFilters = { table };
  for (const name of QUERY_PARAMETERS) {
    const value = search.get(name);
    if (value === null || name === 'table') continue;
    const problem = queryValueProblem(name, value, table);
    if (problem) return { problem };
    filters[name as Exclude<QueryParameter, 'table'>] = value;
  }
  return { filters };
}
