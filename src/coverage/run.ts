/** `coverage` and `status` as library calls: the filters checked, one query of the archive, one scan of the root. */
import { ValidationError } from '../core/errors.js';
import { DataRoot } from '../data-root/index.js';
import type { MissionFile } from '../naming/names.js';
import { hasFilter, toQueryParams } from '../naming/query-params.js';
import { FILTER_NAMES, type QueryFilters, type QueryParams } from '../naming/query-vocabulary.js';
import type { HttpClient } from '../service/client.js';
import { buildCoverage } from './coverage.js';
import { listLocalCopy } from './local-copy.js';
import { byPath } from './products.js';
import { assertNameFilters } from './scope.js';
import { ArchiveSide, checkHeld, compareSides, LocalSide, type StatusComparison } from './status.js';
import type { CoverageReport, StatusReport } from './types.js';

// What the compositions of sync/ use of a data root's scan, a file's day and a status comparison: other folders
// take coverage through this module only.
export { type LocalEntry, listLocalCopy, localEntryOf, scanLocalCopy } from './local-copy.js';
export { dayKey, recordPath, recordPaths } from './products.js';
export { statusTargets } from './status-targets.js';

/** How `coverage` and `status` ask the archive. */
export interface ReportOptions {
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
}

/** The part of the HTTP client the reports use. */
export type ReportHttp = Pick<HttpClient, 'queryFilePages'>;

/**
 * Hands each mission file of the archive a query answers to `take`, page by page as the service answers: no
 * page's records are kept once its files are taken, and each path is read once, by the check of its record.
 */
async function forEachArchiveFile(
  http: ReportHttp,
  params: QueryParams,
  options: ReportOptions,
  take: (file: MissionFile) => void,
): Promise<void> {
  const pages = http.queryFilePages(params, { signal: options.signal, pageSize: options.pageSize });
  for await (const page of pages) for (const file of page) take(file);
}

function requireFilter(filters: QueryFilters): void {
  if (!hasFilter(filters)) {
    throw new ValidationError([
      `Give at least one query filter: ${FILTER_NAMES.filter((name) => name !== 'table').join(', ')}.`,
    ]);
  }
}

/**
 * The query of `coverage`, checked: the filters as given, with `version: 'latest'` unless a version is given
 * (a calendar needs only the latest version of each day, so the answer stays small).
 */
export function coverageParams(filters: QueryFilters): QueryParams {
  if (filters.table === 'spice') {
    throw new ValidationError(
      [
        'coverage draws a calendar of the days science (or ancillary) files start; SPICE kernels cover spans of their own and have no such calendar.',
      ],
      {
        hint: 'List the kernels with query --table spice --type <type>, or compare them with a data root with status --table spice.',
      },
    );
  }
  const params = toQueryParams({ ...filters, version: filters.version ?? 'latest' });
  requireFilter(filters);
  return params;
}

/**
 * The query of `status`, checked: every version (a local file of an older version is the archive's, not
 * extra), so a `latest` version filter is not sent; ingestion-day filters are refused (see `assertNameFilters`).
 */
export function statusParams(filters: QueryFilters): QueryParams {
  const { version, ...rest } = filters;
  const sent = version === 'latest' ? rest : filters;
  const params = toQueryParams(sent);
  assertNameFilters(filters, 'status');
  requireFilter(sent);
  return params;
}

/** The coverage calendar of the filters' products (see `buildCoverage`), against the data root `dataDir`. */
export async function coverageReport(
  http: ReportHttp,
  filters: QueryFilters,
  options: ReportOptions & { dataDir: string },
): Promise<CoverageReport> {
  const params = coverageParams(filters);
  // A root that is a file is refused before anything is asked; one not there yet holds nothing.
  const rootMissing = (await DataRoot.look(options.dataDir)) === 'missing';
  const archive: MissionFile[] = [];
  const local: MissionFile[] = [];
  await Promise.all([
    forEachArchiveFile(http, params, options, (file) => archive.push(file)),
    // A calendar needs only the files here, not their entries.
    listLocalCopy(options.dataDir, filters, (_path, file) => file && local.push(file)),
  ]);
  // In the order of their paths, as a scan gives them: of equal versions of a day here, the first stands for it.
  local.sort(byPath);
  return { ...buildCoverage(archive, local, filters), rootMissing };
}

/** The status of the data root `dataDir` against the archive, within the filters' scope (see `compareSides`). */
export async function statusReport(
  http: ReportHttp,
  filters: QueryFilters,
  options: ReportOptions & { dataDir: string },
): Promise<StatusReport> {
  const params = statusParams(filters);
  // A root that is a file is refused before anything is asked; one not there yet holds nothing.
  const rootMissing = (await DataRoot.look(options.dataDir)) === 'missing';
  // Read only: a report leaves the data root as it found it.
  const root = await DataRoot.open(options.dataDir);
  try {
    const comparison = await compareWithArchive(http, params, filters, options);
    // Read once the files to check are known, and only for them.
    const record = await root.readVerified(comparison.held.map((file) => file.path));
    const report = await checkHeld(comparison, { dataDir: options.dataDir, record, signal: options.signal });
    return { ...report, rootMissing };
  } finally {
    await root.close();
  }
}

/** Both sides of a status, the archive's page by page while the data root is listed, compared. */
async function compareWithArchive(
  http: ReportHttp,
  params: QueryParams,
  filters: QueryFilters,
  options: ReportOptions & { dataDir: string },
): Promise<StatusComparison> {
  const archive = new ArchiveSide();
  const local = new LocalSide(options.dataDir, archive);
  await Promise.all([
    forEachArchiveFile(http, params, options, (file) => archive.add(file)),
    listLocalCopy(options.dataDir, filters, (...found) => local.add(...found)),
  ]);
  return compareSides(archive, local);
}
