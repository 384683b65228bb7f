/** The library entry: `createClient()` ties configuration, the HTTP client and the transfer engines together. */
import type { Dispatcher } from 'undici';
import { abortedError } from './core/batch.js';
import { type Config, type ConfigFlags, loadConfig } from './core/config.js';
import { AbortedError, ValidationError } from './core/errors.js';
import { describeProxy } from './core/proxy.js';
import { type RequestSettings, requestSettings, SETTING_KEYS, type SETTINGS } from './core/settings.js';
import {
  coverageParams,
  coverageReport,
  type ReportOptions,
  statusParams,
  statusReport,
} from './coverage/run.js';
import type { CoverageReport, StatusReport } from './coverage/types.js';
import { type DownloadPreview, downloadFiles, previewDownloads } from './download/engine.js';
import type { DownloadOptions, DownloadResult } from './download/types.js';
import { type DownloadTargets, readTargets } from './naming/download-targets.js';
import { FILTER_NAMES, hasFilter, type QueryFilters, toQueryParams } from './naming/query-vocabulary.js';
import { HttpClient } from './service/client.js';
import type { ReceivedRecord } from './service/records.js';
import { downloadMatching, type MatchingDownload, type MatchingOptions } from './sync/matching.js';
import { checkSyncRequest, syncFiles } from './sync/run.js';
import type { SyncOptions, SyncResult } from './sync/types.js';
import { type VerifyOptions, type VerifyReport, verifyFiles, verifyParams } from './sync/verify.js';
import {
  previewUploads,
  refuseAsUploadWould,
  type UploadOptions,
  type UploadPreview,
  type UploadResult,
  uploadFiles,
} from './upload/engine.js';

// The types of the calls below, and the one word of upload results the command line prints, for the command
// line, which reaches the engines only through this module.
export type { DownloadOptions, DownloadProgress, DownloadResult } from './download/types.js';
export type { ArchiveGlob } from './naming/glob.js';
export { ALREADY_STORED } from './upload/engine.js';
export type { DownloadPreview, DownloadTargets, MatchingDownload, UploadPreview, UploadResult };

/**
 * Settings of `createClient`: every setting of the table by its name (`url`, `apiKey`, `token`, `dataDir`,
 * `retries`, `timeout` in seconds, `concurrency`, `connections`, `partSize` in MiB, `requireChecksum`), as a value
 * or its text; each one left out resolves as environment > configuration file > default (see the README's table).
 * A call's own options (`download(…, { concurrency })`) win over these.
 */
export type CreateClientOptions = {
  [Entry in (typeof SETTINGS)[number] as Entry['key']]?: ReturnType<Entry['parse']> | string | undefined;
} & {
  /** Transport to use instead of the client's own keep-alive agent (tests, proxies). */
  dispatcher?: Dispatcher | undefined;
  /** @deprecated Use `retries` (attempts = retries + 1); kept for one release. Overrides `retries` when given. */
  attempts?: number | undefined;
  /** First backoff delay in ms, doubled on every retry (with jitter); default 1000. */
  retryBaseMs?: number | undefined;
  /** Configuration file to read instead of the default one. */
  configFile?: string | undefined;
  /** Environment to read instead of the process's. */
  env?: Record<string, string | undefined> | undefined;
  /** Receives one line per request and retry, for debugging. */
  log?: ((line: string) => void) | undefined;
  /** Receives what in the configuration is ignored (an unknown setting in the file), once it is read. */
  onWarning?: ((message: string) => void) | undefined;
};

/** How `MissionDataClient.query` asks. */
export interface QueryOptions {
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
  /**
   * Called once, with their count, when the answer holds records of a naming form this version does not check
   * (a newer service's): they are kept, and downloadable by their `file_path`.
   */
  onNewerForms?: ((count: number) => void) | undefined;
  /**
   * Called once, with the count returned, when the service cannot page and its answer has a count services cap
   * answers at (or it said there were more): the result may be cut. Narrow the filters to be sure.
   */
  onPossiblyCut?: ((returned: number) => void) | undefined;
}

/**
 * A client of the service.
 *
 * One rule for cancelling, on every call: once its `signal` aborts, the call rejects with an `AbortedError`
 * (code `E_ABORTED`). A batch call (`download`, `upload`) attaches what it did to that error as `results`: one
 * result per file, those finished as they are, those cut short `failed` with the bytes kept for a resume, those
 * never begun `failed` with code `E_NOT_ATTEMPTED`. Without an abort, a batch never rejects for one file's
 * failure: each result carries its own status and error.
 */
export interface MissionDataClient {
  /** Metadata records of the stored files matching every filter (at least one besides `table`), every page. */
  query(filters: QueryFilters, options?: QueryOptions): Promise<ReceivedRecord[]>;
  /**
   * What download arguments mean against the data root: storage paths and names as they are, a path inside the
   * data root as the storage path it holds, a folder of the layout as the filters its folders spell, and globs as
   * queries of their fixed parts (relative paths from `cwd`, by default the working directory).
   */
  readDownloadTargets(paths: readonly string[], cwd?: string): Promise<DownloadTargets>;
  /** What `download` would do with each file (a dry run): names are checked, nothing is requested. */
  previewDownloads(
    targets: readonly string[],
    options?: Pick<DownloadOptions, 'force'>,
  ): Promise<DownloadPreview[]>;
  /** Downloads files (names, storage paths or query records) into the data root; one result per file. */
  download(
    targets: string | ReceivedRecord | readonly (string | ReceivedRecord)[],
    options?: Omit<DownloadOptions, 'dataDir'>,
  ): Promise<DownloadResult[]>;
  /**
   * Downloads the files the filters select (at least one besides `table`): every match, or (`select`) only those
   * `status` lists as missing, or all it lists (`update`); with `dryRun`, previews it. What was selected and done.
   */
  downloadMatching(filters: QueryFilters, options?: MatchingOptions): Promise<MatchingDownload>;
  /**
   * Keeps the data root in step with the archive for the filters (at least one besides `table`): the first call
   * fetches every match (the newest version of each product unless `allVersions`), later ones only what was
   * ingested since (a day of overlap), never asking for a file held and verified. State lives under the data root,
   * one per service URL and filter set; a second sync of the same ones at once rejects with a `BusyError`.
   * Rejects with an `AbortedError` carrying the files as `results` when cancelled (what finished is kept).
   */
  sync(filters: QueryFilters, options?: SyncOptions): Promise<SyncResult>;
  /** Uploads local files (paths inside the data root, relative to the working directory, or absolute). */
  upload(
    paths: string | readonly string[],
    options?: Omit<UploadOptions, 'dataDir'>,
  ): Promise<UploadResult[]>;
  /**
   * What `upload` would send (a dry run): refused in the words the upload would use, or each file's storage key
   * and where it was found (or why it cannot be sent); nothing is asked of the service.
   */
  previewUploads(
    paths: readonly string[],
    options?: Pick<UploadOptions, 'ignoreFolder' | 'cwd'>,
  ): Promise<UploadPreview[]>;
  /**
   * The coverage calendar of the products the filters select (at least one besides `table`): for each product,
   * every day of the range with the archive's latest version and what the data root holds of it, and the gaps.
   * One query of the archive, every page of it.
   */
  coverage(filters: QueryFilters, options?: ReportOptions): Promise<CoverageReport>;
  /**
   * How the data root differs from the archive within the filters' scope: files `missing` locally, `outdated`
   * (a newer version in the archive), `extra` (not in the archive, or named against the rules) and `changed`
   * (bytes no longer those verified when downloaded). Ingestion-day filters are refused: names do not carry them.
   */
  status(filters: QueryFilters, options?: ReportOptions): Promise<StatusReport>;
  /**
   * Hashes every file of the data root in the filters' scope (as `status`'s), whatever its times say: each is
   * compared with the checksum recorded when it was verified, or (a file not downloaded here) with the one the
   * archive states; `ok`, `corrupt`, `unverifiable`, `extra` or `unreadable` per file. `repair` fetches corrupt
   * files again; `notVerifiedSince` limits the pass to files not verified since a date. The download record
   * remembers when each file was last found whole. Rejects with an `AbortedError` carrying the entries settled
   * so far as `results` when cancelled.
   */
  verify(filters: QueryFilters, options?: Omit<VerifyOptions, 'dataDir'>): Promise<VerifyReport>;
  /** The resolved configuration (URL, data root, where each came from). */
  config(): Promise<Config>;
  /** Closes the client's connections. */
  close(): Promise<void>;
}

/** How a batch of downloads runs, as the settings resolved it: what a call leaves out is taken from here. */
interface TransferSettings {
  concurrency: number;
  connections: number | 'auto';
  partSizeBytes: number;
  requireChecksum: boolean;
}

/** A client's state once its settings are read: the configuration, the service client and what is handed down. */
interface ClientState {
  config: Config;
  http: HttpClient;
  /** Resolved once; the service client and both engines are handed this object. */
  requests: RequestSettings;
  transfer: TransferSettings;
}

/** Gives the client's state, reading the settings on first use. */
type Ready = () => Promise<ClientState>;

const MIB = 1024 * 1024;

/** The settings of `options`, each as its text, as `loadConfig` takes flags. */
function settingFlags(options: CreateClientOptions): ConfigFlags {
  const flags: ConfigFlags = {};
  for (const key of SETTING_KEYS) {
    const value = options[key];
    flags[key] = value === undefined ? undefined : String(value);
  }
  return flags;
}

/** Reads the settings and makes the service client, handing it the request settings resolved once. */
async function openClient(options: CreateClientOptions): Promise<ClientState> {
  const config = await loadConfig(settingFlags(options), {
    ...(options.env ? { env: options.env } : {}),
    ...(options.configFile ? { configFile: options.configFile } : {}),
  });
  for (const warning of config.warnings) options.onWarning?.(warning);
  if (!options.dispatcher) options.log?.(describeProxy(config.proxy));
  const requests = requestSettings({
    retries: options.attempts !== undefined ? Math.max(0, options.attempts - 1) : config.retries,
    timeoutMs: config.timeout * 1000,
    retryBaseMs: options.retryBaseMs,
    log: options.log,
  });
  const http = new HttpClient({
    url: config.url,
    apiKey: config.apiKey,
    token: config.token,
    dispatcher: options.dispatcher,
    proxy: config.proxy,
    ...requests,
  });
  const transfer: TransferSettings = {
    concurrency: config.concurrency,
    connections: config.connections,
    partSizeBytes: config.partSize * MIB,
    requireChecksum: config.requireChecksum,
  };
  return { config, http, requests, transfer };
}

/** A call's download options, each transfer setting it leaves out taken from the client's. */
function withTransfer<Options extends Omit<DownloadOptions, 'dataDir'>>(
  given: Options,
  { transfer }: ClientState,
): Options {
  return {
    ...given,
    concurrency: given.concurrency ?? transfer.concurrency,
    connections: given.connections ?? transfer.connections,
    partSize: given.partSize ?? transfer.partSizeBytes,
    requireChecksum: given.requireChecksum ?? transfer.requireChecksum,
  };
}

/** The calls that read: `query`, `coverage`, `status`, `verify` and `config`. */
function readingCalls(
  ready: Ready,
): Pick<MissionDataClient, 'query' | 'coverage' | 'status' | 'verify' | 'config'> {
  return {
    async query(filters, queryOptions = {}) {
      // Checked before the configuration is read: a bad value never costs a file read or a request.
      const params = toQueryParams(filters);
      if (!hasFilter(filters)) {
        throw new ValidationError([
          `Give at least one query filter: ${FILTER_NAMES.filter((name) => name !== 'table').join(', ')}.`,
        ]);
      }
      const { http } = await ready();
      return http.query(params, queryOptions);
    },
    async coverage(filters, reportOptions = {}) {
      coverageParams(filters);
      const { config, http } = await ready();
      return coverageReport(http, filters, { ...reportOptions, dataDir: config.dataDir });
    },
    async status(filters, reportOptions = {}) {
      statusParams(filters);
      const { config, http } = await ready();
      return statusReport(http, filters, { ...reportOptions, dataDir: config.dataDir });
    },
    async verify(filters, verifyOptions = {}) {
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
      const state = await ready();
      const { config, http, requests } = state;
      const options = { ...withTransfer(downloadOptions, state), dataDir: config.dataDir, requests };
      return unlessAborted(await downloadFiles(http, paths, options), downloadOptions.signal);
    },
    async downloadMatching(filters, matchingOptions = {}) {
      const state = await ready();
      const { config, http, requests } = state;
      const options = { ...withTransfer(matchingOptions, state), dataDir: config.dataDir, requests };
      const done = await downloadMatching(http, filters, options);
      unlessAborted(done.results, matchingOptions.signal);
      return done;
    },
    async sync(filters, syncOptions = {}) {
      checkSyncRequest(filters, syncOptions);
      const state = await ready();
      const { config, http, requests } = state;
      const options = {
        ...withTransfer(syncOptions, state),
        dataDir: config.dataDir,
        url: config.url,
        requests,
      };
      return syncFiles(http, filters, options);
    },
    async upload(paths, uploadOptions = {}) {
      const list: readonly string[] = typeof paths === 'string' ? [paths] : paths;
      const { config, http, requests } = await ready();
      const results = await uploadFiles(http, list, { ...uploadOptions, dataDir: config.dataDir, requests });
      return unlessAborted(results, uploadOptions.signal);
    },
  };
}

/** The calls that read what a call would do, and ask nothing of the service: targets read, dry runs planned. */
function planningCalls(
  ready: Ready,
): Pick<MissionDataClient, 'readDownloadTargets' | 'previewDownloads' | 'previewUploads'> {
  return {
    async readDownloadTargets(paths, cwd) {
      return readTargets(paths, (await ready()).config.dataDir, cwd);
    },
    async previewDownloads(targets, previewOptions = {}) {
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
    state ??= openClient(options);
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
  await refuseAsUploadWould(paths, options);
  return previewUploads(paths, options);
}

/** A batch's results, or the `AbortedError` carrying them when the batch was cancelled (see `MissionDataClient`). */
function unlessAborted<Result extends object>(results: Result[], signal: AbortSignal | undefined): Result[] {
  if (!signal?.aborted) return results;
  const reason = abortedError(signal);
  throw new AbortedError(reason.message, { cause: signal.reason, results });
}
