/** What a sync takes and gives: its options, the files it considered and what the run did. */
import type { WithRequests, WithTransfer } from '../core/call-settings.js';
import type { DownloadOptions, DownloadProgress, DownloadResult } from '../download/types.js';
import type { HttpClient } from '../service/client.js';

/** How to sync: the transfer options given win over the client's transfer settings, as for a download. */
export interface SyncOptions
  extends Pick<
    DownloadOptions,
    'concurrency' | 'connections' | 'partSizeBytes' | 'requireChecksum' | 'signal'
  > {
  /** Every version of each product, not only the newest. */
  allVersions?: boolean | undefined;
  /**
   * Compare the whole selection with the archive (not only what is new), and notice held files changed here. Held
   * files deleted here are noticed by every run (one listing of the folders in scope).
   */
  full?: boolean | undefined;
  /** Remove the local versions a newer version held supersedes (only files this tool downloaded and verified). */
  prune?: boolean | undefined;
  /** Fetch and remove nothing; say what would be done. The state is left as it was. */
  dryRun?: boolean | undefined;
  /** Records per page asked of a service that pages. */
  pageSize?: number | undefined;
  /**
   * When cancelled, keep the part files of the files cut short for the next run to resume (default), or remove
   * them (a watch that is stopped leaves no part behind; the next run fetches those files whole).
   */
  keepParts?: boolean | undefined;
  /** Called once the files to fetch are known, with their count. */
  onStart?: ((files: number) => void) | undefined;
  /** Progress of each file fetched, as `download` reports it. */
  onProgress?: ((event: DownloadProgress) => void) | undefined;
  /** One line about the run worth telling: a damaged state file, a service that cannot answer by ingestion day. */
  onNotice?: ((message: string) => void) | undefined;
}

/** What became of one file a sync considered. */
export type SyncFileStatus =
  | DownloadResult['status']
  | 'superseded'
  | 'pruned'
  | 'would-download'
  | 'would-prune';

/** One file a sync considered. */
export interface SyncFile {
  path: string;
  localPath: string;
  status: SyncFileStatus;
  error?: Error | undefined;
}

/** What one sync did. */
export interface SyncResult {
  /** True when no state of an earlier run was found (or it could not be used). */
  firstRun: boolean;
  /** `new`: only what was ingested since the last run was asked for; `whole`: the whole selection. */
  compared: 'new' | 'whole';
  /** With `compared: 'new'`: the first ingestion day asked for (`YYYYMMDD`). */
  since?: string | undefined;
  /** Every file considered: fetched, skipped (held and verified), failed, newly superseded, pruned. */
  files: SyncFile[];
  /** Storage paths fetched in this run. */
  fetched: string[];
  /** Files held and verified already, not fetched. */
  skipped: number;
  /** Storage paths that failed; asked for again on the next run. */
  failed: string[];
  /**
   * Held versions found superseded by a newer held version in this run, left in place: each is named by one run
   * only (with `prune` and `dryRun`: every version the prune would remove).
   */
  superseded: string[];
  /** Superseded versions removed. */
  pruned: string[];
  /** True when every selected file is held and verified. */
  inStep: boolean;
}

/** The part of the HTTP client a sync uses. */
export type SyncHttp = Pick<
  HttpClient,
  'query' | 'queryPages' | 'queryFilePages' | 'resolveDownload' | 'getObject'
>;

/** What `syncFiles` is handed: the call's options, where and from whom, and the client's settings, whole. */
export type SyncRequest = SyncOptions & { dataDir: string; url: string } & WithRequests & WithTransfer;
