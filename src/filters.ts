/** Query filters as the library and the command line name them (camelCase), mapped to the service's parameters. */
import { ValidationError } from './errors.js';
import { type QueryParameter, queryValueProblem } from './naming.js';

/** Filters of a query; each maps to the service parameter of the same name in snake_case. */
export interface QueryFilters {
  /** `science` (default) or `ancillary`. */
  table?: 'science' | 'ancillary' | undefined;
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

/** Each filter's service parameter, in the order messages list them. */
export const FILTER_PARAMETERS: Readonly<Record<keyof QueryFilters, QueryParameter>> = {
  table: 'table',
  instrument: 'instrument',
  dataLevel: 'data_level',
  descriptor: 'descriptor',
  startDate: 'start_date',
  endDate: 'end_date',
  ingestionStartDate: 'ingestion_start_date',
  ingestionEndDate: 'ingestion_end_date',
  version: 'version',
  extension: 'extension',
  filePath: 'file_path',
};

/** The filter names, `table` first. */
export const FILTER_NAMES = Object.keys(FILTER_PARAMETERS) as (keyof QueryFilters)[];

/** The command-line flag of a filter, e.g. `--data-level`. */
export function filterFlag(name: keyof QueryFilters): string {
  return `--${FILTER_PARAMETERS[name].replaceAll('_', '-')}`;
}

/** The filters actually given (set and non-empty), ignoring every other property of `options`. */
export function pickFilters(options: object): QueryFilters {
  const picked: Record<string, string> = {};
  for (const name of FILTER_NAMES) {
    const value = (options as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') picked[name] = value;
  }
  return picked as QueryFilters;
}

/** True when at least one filter other than `table` is given. */
export function hasFilter(filters: QueryFilters): boolean {
  return FILTER_NAMES.some((name) => name !== 'table' && filters[name] !== undefined && filters[name] !== '');
}

/**
 * Maps filters to service parameters, checking every value first; throws a `ValidationError` listing each bad
 * value (and each unknown filter name a JavaScript caller may pass).
 */
export function toQueryParams(filters: QueryFilters): Partial<Record<QueryParameter, string>> {
  const problems: string[] = [];
  const params: Partial<Record<QueryParameter, string>> = {};
  const table = filters.table === 'ancillary' ? 'ancillary' : 'science';
  // Problems are listed in the order of the filters, whatever order the caller's object has.
  for (const name of FILTER_NAMES) {
    const value: unknown = filters[name];
    if (value === undefined) continue;
    const parameter = FILTER_PARAMETERS[name];
    if (typeof value !== 'string') {
      problems.push(`The ${name} filter must be a string.`);
      continue;
    }
    const problem = queryValueProblem(parameter, value, table);
    if (problem) problems.push(problem);
    else params[parameter] = value;
  }
  for (const name of Object.keys(filters)) {
    if (!(name in FILTER_PARAMETERS)) {
      problems.push(`Unknown query filter ${JSON.stringify(name)}. Filters are: ${FILTER_NAMES.join(', ')}.`);
    }
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return params;
}
