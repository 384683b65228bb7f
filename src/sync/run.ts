/**
 * `sync` as a library call: keeps a data root in step with the archive for one filter set, asking the service
 * only for what was ingested since the last run and never asking `/download` for a file held and verified.
 */

import { abortedError } from '../core/batch.js';
import { transferFor } from '../core/call-settings.js';
import { AbortedError, ApiError, UsageError, ValidationError } from '../core/errors.js';
import { removeFile } from '../core/replace-file.js';
import { recordPath as storagePathOf } from '../coverage/run.js';
import { DataRoot, localError, type SyncIdentity, type SyncState } from '../data-root/index.js';
import { downloadFiles, previewDownloads } from '../download/engine.js';
import type { DownloadResult } from '../download/types.js';
import { hasFilter, toQueryParams } from '../naming/query-params.js';
import { FILTER_NAMES, type QueryFilters } from '../naming/query-vocabulary.js';
import type { ReceivedRecord } from '../service/records.js';
import { findGoneHeld } from './gone.js';
import { dayBefore } from './ingestion-days.js';
import { LocalFiles } from './local-files.js';
import { chooseNewest, superseded } from './newest.js';
import { findSuperseded } from './superseded.js';
import type { SyncFile, SyncHttp, SyncOptions, SyncRequest, SyncResult } from './types.js';

/** Checks a sync's filters and options before anything is read or sent. */
export function checkSyncRequest(
  filters: QueryFilters,
  options: Pick<SyncOptions, 'prune' | 'allVersions'>,
): void {
  toQueryParams(filters);
  if (!hasFilter(filters)) {
    throw new ValidationError([
      `Give at least one query filter: ${FILTER_NAMES.filter((name) => name !== 'table').join(', ')}.`,
    ]);
  }
  if (options.prune && options.allVersions) {
    throw new UsageError(
      '--prune removes older versions, which --all-versions keeps: give one or the other.',
    );
  }
}

/** True when the service refused the ingestion-day filter (an older service): a 400 naming it. */
function refusesIngestionFilter(error: unknown): boolean {
  return error instanceof ApiError && error.status === 400 && /ingestion_start_date/.test(error.message);
}

/** Syncs the data root `dataDir` with the service at `url` for `filters` (see `SyncOptions`). */
export async function syncFiles(
  http: SyncHttp,
  filters: QueryFilters,
  options: SyncRequest,
): Promise<SyncResult> {
  checkSyncRequest(filters, options);
  const identity: SyncIdentity = { url: options.url, filters, allVersions: Boolean(options.allVersions) };
  // A data root that is a file, read-only or forbidden is told in words, as `download` tells it, before the
  // lock and the state below it are written (a dry run writes neither).
  const root = await DataRoot.open(options.dataDir, { writable: !options.dryRun });
  try {
    if (!options.dryRun) await root.lockSync(identity);
    return await new SyncRun(http, filters, options, identity, root).run();
  } finally {
    // The lock released with it.
    await root.close();
  }
}

/** One run of a sync: its state, what it asked and what it decided. */
class SyncRun {
  #state!: SyncState;
  #first = true;
  /** The data root's files in the selection's scope, listed once (again only after a transfer changed some). */
  #local!: LocalFiles;
  /** Ingestion date of each file the archive offered in this run (null when it gave none). */
  readonly #dates = new Map<string, string | null>();

  constructor(
    readonly http: SyncHttp,
    readonly filters: QueryFilters,
    readonly options: SyncRequest,
    readonly identity: SyncIdentity,
    readonly root: DataRoot,
  ) {}

  async run(): Promise<SyncResult> {
    const { options } = this;
    const loaded = await this.root.readSyncState(this.identity);
    if (loaded.problem) options.onNotice?.(loaded.problem);
    this.#state = loaded.state;
    this.#first = loaded.first;

    // The data root is listed while the archive answers.
    const [asked, local] = await Promise.all([
      this.#ask(),
      LocalFiles.scan(options.dataDir, this.filters, this.#state.held),
    ]);
    this.#local = local;
    const { targets, older } = await this.#targets(asked.since === undefined);
    const { files, results } = await this.#transfer(targets);
    if (!options.dryRun) this.#settle(results, older);
    const aborted = options.signal?.aborted === true;
    const { superseded, pruned } = aborted
      ? { superseded: [], pruned: [] }
      : await this.#supersededFiles(files, results);
    if (!options.dryRun) await this.root.writeSyncState(this.identity, this.#state);
    if (aborted && options.signal) {
      // The parts of the files cut short, unless kept for the next run to resume.
      if (options.keepParts === false)
        await this.root.removeOwnParts(
          files.filter((file) => file.status === 'failed').map((file) => file.localPath),
        );
      const reason = abortedError(options.signal);
      throw new AbortedError(reason.message, { cause: options.signal.reason, results: files });
    }
    const failed = files.filter((file) => file.status === 'failed').map((file) => file.path);
    return {
      firstRun: this.#first,
      compared: asked.since === undefined ? 'whole' : 'new',
      since: asked.since,
      files,
      fetched: files
        .filter((file) => file.status === 'downloaded' || file.status === 'replaced')
        .map((file) => file.path),
      skipped: files.filter((file) => file.status === 'skipped').length,
      failed,
      superseded,
      pruned,
      inStep: failed.length === 0 && !files.some((file) => file.status === 'would-download'),
    };
  }

  /**
   * The files to fetch: those offered that are wanted, the held files deleted here and, with `full`, the held
   * files the archive still offers (the download fetches those changed here); and the offered versions that a
   * newer one supersedes. `whole`: the whole selection was asked for, so what the archive offers is known.
   */
  async #targets(whole: boolean): Promise<{ targets: string[]; older: string[] }> {
    const { gone, withdrawn } = await findGoneHeld(
      this.#state,
      this.#local,
      this.identity.allVersions,
      whole ? this.#dates : undefined,
    );
    if (withdrawn.length > 0 && !this.options.dryRun) {
      this.options.onNotice?.(
        `${withdrawn.length} held file${withdrawn.length === 1 ? '' : 's'} deleted here, no longer in the archive: not fetched again.`,
      );
    }
    const held = Object.keys(this.#state.held);
    const offered = [...this.#dates.keys(), ...this.#state.failed];
    let targets: string[];
    let older: string[] = [];
    if (this.identity.allVersions) {
      const heldSet = new Set(held);
      targets = [...[...new Set(offered)].filter((path) => !heldSet.has(path)), ...gone];
    } else {
      const choice = chooseNewest(held, offered, (path) => this.#local.versionOf(path));
      // A held file deleted here is fetched again, unless a newer version offered is fetched in its place.
      const replaced = new Set(superseded([...gone, ...choice.fetch]));
      targets = [...choice.fetch, ...gone.filter((path) => !replaced.has(path))];
      older = choice.older;
    }
    if (this.options.full) targets = [...targets, ...this.#heldNewest(held)];
    return { targets: [...new Set(targets)], older };
  }

  /** The targets downloaded (or, in a dry run, previewed): a file each, and the download's results. */
  async #transfer(targets: string[]): Promise<{ files: SyncFile[]; results: DownloadResult[] }> {
    const { options } = this;
    if (options.dryRun) {
      const previews = await previewDownloads(targets, { dataDir: options.dataDir });
      const files = previews.map(
        (preview): SyncFile => ({
          path: preview.path,
          localPath: preview.localPath,
          status: preview.action === 'skip' ? 'skipped' : 'would-download',
        }),
      );
      return { files, results: [] };
    }
    if (targets.length === 0) {
      options.onStart?.(0);
      return { files: [], results: [] };
    }
    options.onStart?.(targets.length);
    const results = await downloadFiles(this.http, targets, {
      dataDir: options.dataDir,
      // The client's transfer settings, whole, with those the call gave in their place.
      transfer: transferFor(options.transfer, options),
      requests: options.requests,
      signal: options.signal,
      onProgress: options.onProgress,
    });
    const files = results.map(
      (result): SyncFile => ({
        path: result.path,
        localPath: result.localPath,
        status: result.status,
        error: result.error,
      }),
    );
    return { files, results };
  }

  /** Asks the archive: what was ingested since the cursor less a day, or the whole selection. */
  async #ask(): Promise<{ since?: string | undefined }> {
    const { options, filters } = this;
    const state = this.#state;
    const version = filters.version === 'latest' ? undefined : filters.version;
    const since =
      !options.full && state.incremental && state.cursor !== null ? dayBefore(state.cursor) : undefined;
    const query = async (extra: QueryFilters): Promise<ReceivedRecord[]> =>
      this.http.query(toQueryParams({ ...filters, version, ...extra }), {
        signal: options.signal,
        pageSize: options.pageSize,
      });
    let records: ReceivedRecord[] | undefined;
    let asked: string | undefined;
    if (since !== undefined) {
      // A later ingestion start given with the filters stays the one asked for.
      asked =
        filters.ingestionStartDate !== undefined && filters.ingestionStartDate > since
          ? filters.ingestionStartDate
          : since;
      try {
        records = await query({ ingestionStartDate: asked });
      } catch (error) {
        if (!refusesIngestionFilter(error)) throw error;
        state.incremental = false;
        asked = undefined;
        options.onNotice?.(
          'The service refuses ingestion_start_date: comparing the whole selection instead (held files are not asked for again).',
        );
      }
    }
    // The whole selection: with only the newest version of each product asked for, unless every version is kept.
    records ??= await query({
      version: version ?? (this.identity.allVersions ? undefined : 'latest'),
    });
    for (const record of records) {
      const path = storagePathOf(record);
      if (path !== undefined) this.#dates.set(path, record.ingestion_date ?? null);
    }
    return { since: asked };
  }

  /** The held files that no other held file supersedes and that the archive still offered (for `--full`). */
  #heldNewest(held: readonly string[]): string[] {
    const choice = chooseNewest([], held, (path) => this.#local.versionOf(path));
    return choice.fetch.filter((path) => this.#dates.has(path));
  }

  /** Records the outcome in the state: verified files held, failed ones kept to ask again, the cursor moved on. */
  #settle(results: readonly DownloadResult[], older: readonly string[]): void {
    const state = this.#state;
    const failed = new Set(state.failed);
    let failedFrom: string | undefined;
    for (const result of results) {
      if (result.status === 'failed') {
        failed.add(result.path);
        const date = this.#dates.get(result.path);
        if (date && (failedFrom === undefined || date < failedFrom)) failedFrom = date;
        continue;
      }
      failed.delete(result.path);
      state.held[result.path] = this.#dates.get(result.path) ?? state.held[result.path] ?? null;
    }
    // A failed file that a newer held version now supersedes is not wanted any more.
    const wanted = new Set(results.map((result) => result.path));
    for (const path of failed) if (!wanted.has(path) && older.includes(path)) failed.delete(path);
    state.failed = [...failed].sort();

    // The cursor moves over what ended verified or is not wanted, never past a file that failed.
    let cursor = state.cursor;
    let missingDate = false;
    for (const [path, date] of this.#dates) {
      if (date === null) {
        missingDate = true;
        continue;
      }
      if (failed.has(path)) continue;
      if (cursor === null || date > cursor) cursor = date;
    }
    if (failedFrom !== undefined && cursor !== null && failedFrom < cursor) {
      cursor = state.cursor !== null && state.cursor > failedFrom ? state.cursor : failedFrom;
    }
    // Records without an ingestion date leave nothing to count from: every run compares the whole selection.
    state.cursor = missingDate ? null : cursor;
  }

  /**
   * The local versions a newer version held supersedes (see `findSuperseded`): removed with `prune`; otherwise
   * each is reported in the run that finds it superseded, not again (the state keeps those known). A dry run of
   * `prune` lists every removal it plans.
   */
  async #supersededFiles(
    files: SyncFile[],
    results: readonly DownloadResult[],
  ): Promise<{ superseded: string[]; pruned: string[] }> {
    if (this.identity.allVersions) return { superseded: [], pruned: [] };
    const { prune, dryRun, dataDir } = this.options;
    // A transfer that wrote or removed anything has changed the listing; files it skipped were left as they were.
    if (results.some((result) => result.status !== 'skipped'))
      this.#local = await LocalFiles.scan(dataDir, this.filters, this.#state.held);
    const found = await findSuperseded(this.root, this.#local);
    const known = new Set(this.#state.superseded);
    const superseded: string[] = [];
    const pruned: string[] = [];
    const kept: string[] = [];
    for (const { path, localPath } of found) {
      if (prune && !dryRun && (await this.#prune(path, localPath, files))) {
        pruned.push(path);
        continue;
      }
      kept.push(path);
      if (prune && !dryRun) continue;
      if (prune || !known.has(path)) {
        superseded.push(path);
        files.push({ path, localPath, status: prune ? 'would-prune' : 'superseded' });
      }
    }
    this.#state.superseded = kept;
    return { superseded, pruned };
  }

  /**
   * Removes one superseded version; true when it is gone. A file that cannot be removed (another program holds it
   * open, on Windows) is reported and counted failed, and the sync goes on: it stays held, so the next run tries
   * again.
   */
  async #prune(path: string, localPath: string, files: SyncFile[]): Promise<boolean> {
    try {
      await removeFile(localPath);
    } catch (cause) {
      const error = localError(`Cannot remove the superseded version ${localPath}`, cause);
      this.options.onNotice?.(`${error.message} It is removed on a later run.`);
      files.push({ path, localPath, status: 'failed', error });
      return false;
    }
    delete this.#state.held[path];
    files.push({ path, localPath, status: 'pruned' });
    return true;
  }
}
