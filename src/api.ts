import type { ClientState } from './api-open.js';
import type { CreateClientOptions, MissionDataClient, QueryOptions } from './api-types.js';
import type { WithRequests, WithTransfer } from './core/call-settings.js';
import { AbortedError } from './core/errors.js';
import type { DownloadPreview } from './download/engine.js';
import type { DownloadTargets } from './naming/download-targets.js';
import type { QueryFilters } from './naming/query-vocabulary.js';
import type { ReceivedRecord } from './service/records.js';
import type { MatchingDownload, MatchingOptions } from './sync/matching.js';
import type { UploadOptions, UploadPreview, UploadResult } from './upload/engine.js';

export type { CreateClientOptions, MissionDataClient, QueryOptions, ReceivedRecord } from './api-types.js';
/**
 * What the command line prints of a coverage report (a calendar, a web page, JSON or CSV), by the library's own
 * functions, loaded once a report is there to print: nothing else of the library needs them.
 */
export const coverageFormats = () => import('./coverage/formats.js');
// The types of the calls below, and the one word of upload results the command line prints, for the command
// line, which reaches the engines only through this module.
export type { DownloadOptions, DownloadProgress, DownloadResult } from './download/types.js';
export type { ArchiveGlob } from './naming/glob.js';
export type { SyncFile, SyncResult } from './sync/types.js';
export { countStatuses } from './sync/verify-entries.js';
export type { DownloadPreview, DownloadTargets, MatchingDownload, UploadPreview, UploadResult };

/** How an upload the store held already, with the same bytes, is reported. */
export const ALREADY_STORED = 'already stored (same bytes)';

/**
 * The engines, each loaded by its first call rather than with the library: a script that only queries, or a
 * command that only reads a report, never parses the transfer code (a few milliseconds of every start-up).
 */
const engines = {
  coverage: () => import('./coverage/run.js'),
  download: () => import('./download/engine.js'),
  matching: () => import('./sync/matching.js'),
  sync: () => import('./sync/run.js'),
  verify: () => import('./sync/verify.js'),
  upload: () => import('./upload/engine.js'),
  targets: () => import('./naming/download-targets.js'),
  /** What a client reads and makes at its first call: its settings, the service client, a query's parameters. */
  opening: () => import('./api-open.js'),
};

/** Gives the client's state, reading the settings on first use. */
type Ready = () => Promise<ClientState>;

/** `queryPages`: the filters checked when the iteration starts, before the configuration is read. */
async function* pagesOf(
  ready: Ready,
  filters: QueryFilters,
  options: QueryOptions,
): AsyncGenerator<ReceivedRecord[], void> {
  const params = (await engines.opening()).checkedQueryParams(filters);
  const { http } = await ready();
  yield* http.queryPages(params, options);
}

/** The calls that read: `query`, `queryPages`, `coverage`, `status`, `verify` and `config`. */
function readingCalls(
  ready: Ready,
): Pick<MissionDataClient, 'query' | 'queryPages' | 'coverage' | 'status' | 'verify' | 'config'> {
  return {
    async query(filters, queryOptions = {}) {
      // Checked before the configuration is read: a bad value never costs a file read or a request.
      const params = (await engines.opening()).checkedQueryParams(filters);
      const { http } = await ready();
      return http.query(params, queryOptions);
    },
    queryPages(filters, queryOptions = {}) {
      return pagesOf(ready, filters, queryOptions);
    },
    async coverage(filters, reportOptions = {}) {
      const { coverageParams, coverageReport } = await engines.coverage();
      coverageParams(filters);
      const { config, http } = await ready();
      return coverageReport(http, filters, { ...reportOptions, dataDir: config.dataDir });
    },
    async status(filters, reportOptions = {}) {
      const { statusParams, statusReport } = await engines.coverage();
      statusParams(filters);
      const { config, http } = await ready();
      return statusReport(http, filters, { ...reportOptions, dataDir: config.dataDir });
    },
    async verify(filters, verifyOptions = {}) {
      const { verifyFiles, verifyParams } = await engines.verify();
      verifyParams(filters, verifyOptions);
      const { config, http, requests } = await ready();
      return verifyFiles(http, filters, { ...verifyOptions, dataDir: config.dataDir, requests });
    },
    async config() {
      return (await ready()).config;
    },
  };
}

/** The calls that transfer files: `download`, `downloadMatching`, `sync` and `upload`. */
function transferCalls(
  ready: Ready,
): Pick<MissionDataClient, 'download' | 'downloadMatching' | 'sync' | 'upload'> {
  return {
    async download(targets, downloadOptions = {}) {
      const list = Array.isArray(targets) ? targets : [targets];
      const paths = list.map((target: string | ReceivedRecord) =>
        typeof target === 'string' ? target : target.file_path,
      );
      const { downloadFiles } = await engines.download();
      const { config, http, requests, transfer } = await ready();
      const options = { ...downloadOptions, dataDir: config.dataDir, requests, transfer };
      return await unlessAborted(await downloadFiles(http, paths, options), downloadOptions.signal);
    },
    async downloadMatching(filters, matchingOptions = {}) {
      const { downloadMatching } = await engines.matching();
      const { config, http, requests, transfer } = await ready();
      const options: MatchingOptions & { dataDir: string } & WithRequests & WithTransfer = {
        ...matchingOptions,
        dataDir: config.dataDir,
        requests,
        transfer,
      };
      const done = await downloadMatching(http, filters, options);
      await unlessAborted(done.results, matchingOptions.signal);
      return done;
    },
    async sync(filters, syncOptions = {}) {
      const { checkSyncRequest, syncFiles } = await engines.sync();
      checkSyncRequest(filters, syncOptions);
      const { config, http, requests, transfer } = await ready();
      const options = { ...syncOptions, dataDir: config.dataDir, url: config.url, requests, transfer };
      return syncFiles(http, filters, options);
    },
    async upload(paths, uploadOptions = {}) {
      const list: readonly string[] = typeof paths === 'string' ? [paths] : paths;
      const { uploadFiles } = await engines.upload();
      const { config, http, requests, transfer } = await ready();
      const options = { ...uploadOptions, dataDir: config.dataDir, requests, transfer };
      return await unlessAborted(await uploadFiles(http, list, options), uploadOptions.signal);
    },
  };
}

/** The calls that read what a call would do, and ask nothing of the service: targets read, dry runs planned. */
function planningCalls(
  ready: Ready,
): Pick<MissionDataClient, 'readDownloadTargets' | 'previewDownloads' | 'previewUploads'> {
  return {
    async readDownloadTargets(paths, cwd) {
      const [{ readTargets }, { config }] = await Promise.all([engines.targets(), ready()]);
      return readTargets(paths, config.dataDir, cwd);
    },
    async previewDownloads(targets, previewOptions = {}) {
      const { previewDownloads } = await engines.download();
      return previewDownloads(targets, {
        dataDir: (await ready()).config.dataDir,
        force: previewOptions.force,
      });
    },
    async previewUploads(paths, previewOptions = {}) {
      return uploadPreview(paths, { ...previewOptions, dataDir: (await ready()).config.dataDir });
    },
  };
}

/** Creates a client; settings resolve as option > environment > configuration file > default, on first use. */
export function createClient(options: CreateClientOptions = {}): MissionDataClient {
  let state: Promise<ClientState> | undefined;
  let closed = false;
  const ready: Ready = () => {
    if (closed) return Promise.reject(new Error('This client is closed.'));
    state ??= engines.opening().then(({ openClient }) => openClient(options));
    return state;
  };
  return {
    ...readingCalls(ready),
    ...transferCalls(ready),
    ...planningCalls(ready),
    async close() {
      const current = state;
      closed = true;
      if (current) await (await current.catch(() => undefined))?.http.close();
    },
  };
}

/** An upload's dry run: a batch the upload refuses (exit 2, with its hint) is refused in the same words. */
async function uploadPreview(
  paths: readonly string[],
  options: Pick<UploadOptions, 'dataDir' | 'ignoreFolder' | 'cwd'>,
): Promise<UploadPreview[]> {
  const { previewUploads, refuseAsUploadWould } = await engines.upload();
  await refuseAsUploadWould(paths, options);
  return previewUploads(paths, options);
}

/** A batch's results, or the `AbortedError` carrying them when the batch was cancelled (see `MissionDataClient`). */
async function unlessAborted<Result extends object>(
  results: Result[],
  signal: AbortSignal | undefined,
): Promise<Result[]> {
  if (!signal?.aborted) return results;
  // Loaded with the engine that ran the batch: nothing to load here.
  const { abortedError } = await import('./core/batch.js');
  const reason = abortedError(signal);
  throw new AbortedError(reason.message, { cause: signal.reason, results });
}
