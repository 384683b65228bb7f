/** The library's public types: the options of `createClient` and what the client it makes offers (`api.ts`). */
import type { Dispatcher } from 'undici';
import type { Config } from './core/config.js';
import type { SETTINGS } from './core/settings.js';
import type { ReportOptions } from './coverage/run.js';
import type { CoverageReport, StatusReport } from './coverage/types.js';
import type { DownloadPreview } from './download/engine.js';
import type { DownloadOptions, DownloadResult } from './download/types.js';
import type { DownloadTargets } from './naming/download-targets.js';
import type { QueryFilters } from './naming/query-vocabulary.js';
import type { ReceivedRecord } from './service/records.js';

export type { QueryRecord, SpiceRecord } from './naming/query-records.js';
/** What a query answers with, for callers of `MissionDataClient.query`. */
export type { QueryFilters, QueryTable } from './naming/query-vocabulary.js';
export type { NewerFormRecord, ReceivedRecord } from './service/records.js';

import type { MatchingDownload, MatchingOptions } from './sync/matching.js';
import type { SyncOptions, SyncResult } from './sync/types.js';
import type { VerifyOptions, VerifyReport } from './sync/verify.js';
import type { UploadOptions, UploadPreview, UploadResult } from './upload/engine.js';

/**
 * Settings of `createClient`: every setting of the table by its name (`url`, `apiKey`, `token`, `dataDir`,
 * `retries`, `timeout` in seconds, `concurrency`, `connections`, `partSize` in MiB, `requireChecksum`), as a value
 * or its text; each one left out resolves as environment > configuration file > default (see the README's table).
 * A call's own options win over these (`download(…, { concurrency })`, `upload(…, { concurrency })`; sizes there
 * in bytes: `partSizeBytes`).
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
  /**
   * Metadata records of the stored files matching every filter (at least one besides `table`), every page: a
   * `QueryRecord` per file of the `science` and `ancillary` tables (today's science records with `repointing`,
   * `cr`, `major_version` and `minor_version`, and no `end_date`), a `SpiceRecord` per kernel of the `spice` table
   * (asked at `/spice-query`; its `file_path` rebuilt from `file_name` when the service leaves it out), or a
   * `NewerFormRecord` for a name of a form newer than this version's. A filter that does not apply to the table
   * searched (`instrument` with `spice`, `kernelType` without it) is a `ValidationError`. `version: 'latest'`
   * keeps the newest version of each file: asked of the service for science and SPICE, chosen by the client from
   * every version for ancillary files. Every record is held at once (some 25 MiB for 100,000 short records):
   * `queryPages` takes them a page at a time.
   */
  query(filters: QueryFilters, options?: QueryOptions): Promise<ReceivedRecord[]>;
  /**
   * The records of `query`, page by page as the service answers them (`pageSize` records a page, in the
   * service's order), for a caller that writes or counts them as they come: the next page is asked only when
   * the loop takes it, so memory holds one page, not the whole answer (but for ancillary `version: 'latest'`,
   * whose newest versions are chosen from every version: that answer comes as one page at the end). No page is
   * empty; a query that matches nothing yields none. Filters are checked when the iteration starts, before any
   * request. A failure after some pages (a request that fails once its retries are spent, a record refused, an
   * abort) rejects the iteration there: the pages already taken are all the caller has, and the answer is
   * incomplete. `onNewerForms` and `onPossiblyCut` are called before the last page is handed over. Leaving the
   * loop early (`break`) asks for no more pages.
   */
  queryPages(filters: QueryFilters, options?: QueryOptions): AsyncIterable<ReceivedRecord[]>;
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
