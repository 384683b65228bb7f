/**
 * `download` with query options, as a library call: the files the filters select (query → download), or only
 * those `status` lists (status → download), fetched or previewed.
 */

import type { WithRequests } from '../core/call-settings.js';
import { ValidationError } from '../core/errors.js';
import { recordPaths, statusReport, statusTargets } from '../coverage/run.js';
import { type DownloadPreview, downloadFiles, previewDownloads } from '../download/engine.js';
import type { DownloadOptions, DownloadResult } from '../download/types.js';
import { hasFilter, toQueryParams } from '../naming/query-params.js';
import { FILTER_NAMES, type QueryFilters } from '../naming/query-vocabulary.js';
import { chooseNewest } from './newest.js';
import type { SyncHttp } from './types.js';

/** Which of the selected files to download. */
export type MatchingSelection =
  /** Every file the filters select. */
  | 'all'
  /** The files `status` lists as missing. */
  | 'missing'
  /** What `status` lists: missing files, newer versions of outdated ones, changed ones. */
  | 'update';

/** How `downloadMatching` selects and fetches. */
export interface MatchingOptions extends Omit<DownloadOptions, 'dataDir'> {
  /** Default `all`. */
  select?: MatchingSelection | undefined;
  /** Preview only: say what would be fetched, checked or skipped; fetch nothing. */
  dryRun?: boolean | undefined;
  /** Records per page asked of a service that pages. */
  pageSize?: number | undefined;
  /** Called once, with the count returned, when the query's answer may be cut (a service that cannot page). */
  onPossiblyCut?: ((returned: number) => void) | undefined;
}

/** What `downloadMatching` selected and did. */
export interface MatchingDownload {
  /** The storage paths selected (empty: nothing to do). */
  targets: string[];
  /** One result per file fetched (none with `dryRun`). */
  results: DownloadResult[];
  /** With `dryRun`: what would be done with each file. */
  previews?: DownloadPreview[] | undefined;
}

/** Selects the files of `filters` (see `MatchingSelection`) and downloads them into `dataDir`, or previews it. */
export async function downloadMatching(
  http: SyncHttp,
  filters: QueryFilters,
  options: MatchingOptions & { dataDir: string } & WithRequests,
): Promise<MatchingDownload> {
  const { select = 'all', dryRun, pageSize, onPossiblyCut, ...download } = options;
  let targets: string[];
  if (select === 'all') {
    const params = toQueryParams(filters);
    if (!hasFilter(filters)) {
      throw new ValidationError([
        `Give at least one query filter: ${FILTER_NAMES.filter((name) => name !== 'table').join(', ')}.`,
      ]);
    }
    const records = await http.query(params, { signal: options.signal, pageSize, onPossiblyCut });
    targets = recordPaths(records);
    // `latest` is the newest of each product and day by the one version order, whichever service answered (today's
    // leaves it to the client for ancillary files; a service of the specification's orders only its own form).
    if (filters.version === 'latest') targets = chooseNewest([], targets).fetch;
  } else {
    const report = await statusReport(http, filters, {
      dataDir: options.dataDir,
      signal: options.signal,
      pageSize,
    });
    targets = statusTargets(report, select);
  }
  if (targets.length === 0) return { targets, results: [] };
  if (dryRun) {
    return {
      targets,
      results: [],
      previews: await previewDownloads(targets, { dataDir: options.dataDir, force: options.force }),
    };
  }
  return { targets, results: await downloadFiles(http, targets, download) };
}
