import {
  abortedError,
  BatchStop,
  FirstAnswer,
  failureOf,
  linkSignal,
  notStartedError,
  runPool,
} from '../core/batch.js';
import { transferFor, type WithRequests, type WithTransfer } from '../core/call-settings.js';
import { ApiError } from '../core/errors.js';
import { Attempts } from '../core/failure-policy.js';
import { type ProgressPace, progressPace } from '../core/pace.js';
import { isExpiredUrl } from '../http/failures.js';
import type { HttpClient } from '../service/client.js';
import { locate, type PlannedUpload, planUploads, refuseMisplaced, uploadKey } from './plan.js';
import { ExactReads, md5Digest, openExactly } from './source.js';
import {
  differenceFromStored,
  isAlreadyStored,
  isNameReserved,
  nextVersionHint,
  reservedMessage,
  tryLaterHint,
} from './stored.js';

/**
 * Progress of one file: while its MD5 is computed (`phase: 'hashing'`, with `hashed` bytes read so far), while
 * bytes go out (`phase: 'sending'`), and once more with `done` when the file is settled.
 */
export interface UploadProgress {
  localPath: string;
  key: string;
  sent: number;
  total: number;
  /** What the file is going through, on events without `done`. */
  phase?: 'hashing' | 'sending';
  /** With `phase: 'hashing'`: bytes of the file hashed so far. */
  hashed?: number;
  done?: UploadResult['status'];
  /** With `done` 'failed': why. */
  error?: Error;
}

/** How to upload. */
export interface UploadOptions {
  /** The local data root: relative paths are looked up below it first. */
  dataDir: string;
  /** The working directory relative paths are looked up in next; default the process's. */
  cwd?: string | undefined;
  /**
   * Files uploaded at once; default the client's transfer settings' (the `concurrency` setting: 8 unless the
   * environment or the configuration file says otherwise).
   */
  concurrency?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of each file: at most every 100 ms per file (and per pass of an upload), its end, and `done`. */
  onProgress?: ((event: UploadProgress) => void) | undefined;
  /** Called once the names are checked, with the number of distinct files to transfer. */
  onStart?: ((files: number) => void) | undefined;
  /**
   * Send the file's MD5 (`Content-MD5`) so the store refuses bytes that changed on the way; default true.
   * Hashing reads the whole file once more before sending it: on a fast link that costs about as much time as
   * the transfer itself.
   */
  checksum?: boolean | undefined;
  /**
   * Upload a file found in a folder that disagrees with its name (below the data root, or in a tree of the
   * layout) by its name alone; by default such a batch is refused before any request (`E_WRONG_FOLDER`).
   */
  ignoreFolder?: boolean | undefined;
}

/**
 * The outcome for one file. `exists` means the store held the file already with the same bytes (same size and
 * MD5): the upload is done. A stored file with other bytes, or whose bytes cannot be compared, is `failed`.
 */
export interface UploadResult {
  localPath: string;
  key: string;
  status: 'uploaded' | 'exists' | 'failed';
  bytes: number;
  error?: Error;
}

/** The part of the HTTP client the upload engine uses. */
export type UploadHttp = Pick<HttpClient, 'presignUpload' | 'putObject' | 'resolveDownload' | 'getObject'>;

/**
 * Uploads files. Every name is checked before any request or file access (a `ValidationError` lists each bad
 * file's problems), then every file found is checked to lie in the folder its name gives (unless
 * `ignoreFolder`); the same storage key given twice is sent once. Never throws for a single file's
 * failure: each result carries its status and error.
 */
export async function uploadFiles(
  http: UploadHttp,
  paths: readonly string[],
  options: UploadOptions & WithRequests & WithTransfer,
): Promise<UploadResult[]> {
  const planned = planUploads(paths);
  const cwd = options.cwd ?? process.cwd();
  if (!options.ignoreFolder) await refuseMisplaced(planned, options.dataDir, cwd);
  options.onStart?.(planned.length);
  const results: UploadResult[] = new Array(planned.length);
  const { concurrency } = transferFor(options.transfer, { concurrency: options.concurrency });
  const link = linkSignal(options.signal, concurrency);
  const perFile: UploadOptions & WithRequests = link ? { ...options, signal: link.signal } : options;
  const stop = new BatchStop();
  const first = new FirstAnswer();
  await runPool(planned.length, concurrency, async (index) => {
    const plan = planned[index] as PlannedUpload;
    if (index > 0) await first.wait(perFile.signal);
    // A file the batch had not begun when it was cancelled is not started, not one more failure.
    const stopped = perFile.signal?.aborted ? notStartedError(perFile.signal) : stop.notAttempted();
    const result: UploadResult = stopped
      ? { localPath: plan.argument, key: plan.file.path, status: 'failed', bytes: 0, error: stopped }
      : await uploadOne(http, plan, cwd, perFile, index === 0 ? () => first.open() : undefined);
    stop.note(result.error);
    if (index === 0) first.open();
    results[index] = result;
    options.onProgress?.({
      localPath: result.localPath,
      key: result.key,
      sent: result.bytes,
      total: result.bytes,
      done: result.status,
      ...(result.error ? { error: result.error } : {}),
    });
  }).finally(() => link?.dispose());
  return results;
}

/**
 * Refuses what `uploadFiles` refuses before any request: a bad name, or (unless `ignoreFolder`) a file found in a
 * folder that disagrees with its name (`E_WRONG_FOLDER`). A dry run asks it first, to answer as the upload would.
 */
export async function refuseAsUploadWould(
  paths: readonly string[],
  options: { dataDir: string; cwd?: string | undefined; ignoreFolder?: boolean | undefined },
): Promise<void> {
  const planned = planUploads(paths);
  if (!options.ignoreFolder) await refuseMisplaced(planned, options.dataDir, options.cwd ?? process.cwd());
}

/** A file `upload` would send, as a dry run sees it: its storage key and where it was found, or why not. */
export interface UploadPreview {
  /** The path as given. */
  argument: string;
  key: string;
  /** The local file found; undefined when none was. */
  localPath: string | undefined;
  /** Its size in bytes, when found. */
  size: number | undefined;
  /** Why the file cannot be sent (not found, unreadable, in the wrong folder). */
  error?: Error;
}

/**
 * What `uploadFiles` would do, without any request: every name is checked (a `ValidationError` as there) and each
 * file looked for where `uploadFiles` looks.
 */
export async function previewUploads(
  paths: readonly string[],
  options: { dataDir: string; cwd?: string | undefined; ignoreFolder?: boolean | undefined },
): Promise<UploadPreview[]> {
  const cwd = options.cwd ?? process.cwd();
  const previews: UploadPreview[] = [];
  for (const plan of planUploads(paths)) {
    try {
      const found = await locate(plan, options.dataDir, cwd, !options.ignoreFolder);
      previews.push({
        argument: plan.argument,
        key: plan.file.path,
        localPath: found.path,
        size: found.size,
      });
    } catch (error) {
      previews.push({
        argument: plan.argument,
        key: plan.file.path,
        localPath: undefined,
        size: undefined,
        error: error as Error,
      });
    }
  }
  return previews;
}

async function uploadOne(
  http: UploadHttp,
  plan: PlannedUpload,
  cwd: string,
  options: UploadOptions & WithRequests,
  /** Called once the service has accepted the name (or said it is stored): the batch's first answer. */
  onAnswered?: () => void,
): Promise<UploadResult> {
  return new FileUpload(http, plan, options, onAnswered).run(cwd);
}

/** A local file as `locate` found it: its path, size and modification time. */
type FoundFile = Awaited<ReturnType<typeof locate>>;

/**
 * One file of an upload batch: found, hashed (its MD5 goes with the request for its address), given an address
 * (or found stored already), and sent whole, again after a failure as the failure policy says.
 */
class FileUpload {
  private readonly key: string;
  private readonly signal: AbortSignal | undefined;
  private localPath: string;
  /** Each pass over the file (its MD5, its sending) is told at most every 100 ms, and at its end. */
  private readonly paces: { hashing: ProgressPace<UploadProgress>; sending: ProgressPace<UploadProgress> };
  private reads: ExactReads | undefined;
  private digest: Promise<Buffer> | undefined;

  constructor(
    private readonly http: UploadHttp,
    private readonly plan: PlannedUpload,
    private readonly options: UploadOptions & WithRequests,
    private readonly onAnswered: (() => void) | undefined,
  ) {
    this.key = plan.file.path;
    this.signal = options.signal;
    this.localPath = plan.argument;
    const emit = (event: UploadProgress) => options.onProgress?.(event);
    this.paces = { hashing: progressPace(emit), sending: progressPace(emit) };
  }

  async run(cwd: string): Promise<UploadResult> {
    const { key, signal, options } = this;
    try {
      if (signal?.aborted) throw abortedError(signal);
      const found = await locate(this.plan, options.dataDir, cwd, false);
      this.localPath = found.path;
      // Hashed before the name is asked for: the request carries it, so the store takes only these bytes and a
      // re-run of an upload whose answer was lost (the name held, nothing stored) takes that upload back.
      const contentMd5 = options.checksum === false ? undefined : (await this.hash(found)).toString('base64');
      const address = await this.address(found, contentMd5);
      if (address === undefined) return { localPath: this.localPath, key, status: 'exists', bytes: 0 };
      this.paces.hashing.stop();
      return await this.send(found, address, contentMd5);
    } catch (error) {
      return { localPath: this.localPath, key, status: 'failed', bytes: 0, error: failureOf(error, signal) };
    } finally {
      this.reads?.close();
      // Nothing held back is told after the file's end.
      this.paces.hashing.stop();
      this.paces.sending.stop();
    }
  }

  /** The file's MD5, read once however often it is asked for. */
  private hash(found: FoundFile): Promise<Buffer> {
    const { localPath, key } = this;
    this.digest ??= md5Digest(localPath, found.size, this.signal, found.mtimeMs, (hashed) =>
      this.paces.hashing.push(
        { localPath, key, sent: 0, total: found.size, phase: 'hashing', hashed },
        hashed >= found.size,
      ),
    );
    return this.digest;
  }

  /**
   * The address to send the file to, and when it was issued; undefined when the store holds the same bytes
   * under the name already. A name reserved, or held with other bytes, is refused.
   */
  private async address(
    found: FoundFile,
    contentMd5: string | undefined,
  ): Promise<{ url: string; issuedAt: number } | undefined> {
    const { http, key, signal } = this;
    try {
      const url = await http.presignUpload(uploadKey(this.plan.file), signal, false, contentMd5);
      const issuedAt = Date.now();
      this.onAnswered?.();
      return { url, issuedAt };
    } catch (error) {
      if (!isAlreadyStored(error)) throw error;
      this.onAnswered?.();
      if (isNameReserved(error)) {
        throw new ApiError(
          { method: 'upload', url: key, status: error.status, message: reservedMessage(error) },
          { code: 'E_NAME_RESERVED', cause: error, hint: tryLaterHint(error) },
        );
      }
      const difference = await differenceFromStored(http, key, found, () => this.hash(found), signal);
      if (difference === undefined) return undefined;
      // Reported as the upload it refuses, not as the GET that asked for an address (issue 19).
      throw new ApiError(
        { method: 'upload', url: key, status: error.status, message: difference },
        { code: 'E_ALREADY_EXISTS', cause: error, hint: nextVersionHint(this.plan.file) },
      );
    }
  }

  /** Sends the file whole to its address, a new address once if it expired, until it is stored or given up. */
  private async send(
    found: FoundFile,
    address: { url: string; issuedAt: number },
    contentMd5: string | undefined,
  ): Promise<UploadResult> {
    const { http, key, signal, localPath, options } = this;
    const reads = new ExactReads(localPath, found.size, found.mtimeMs);
    this.reads = reads;
    const put = {
      size: found.size,
      ...(contentMd5 ? { contentMd5 } : {}),
      open: () => openExactly(localPath, found.size, found.mtimeMs),
      read: reads.read.bind(reads),
      check: reads.check.bind(reads),
      ...(signal ? { signal } : {}),
      onBytes: (sent: number) =>
        this.paces.sending.push(
          { localPath, key, sent, total: found.size, phase: 'sending' },
          sent >= found.size,
        ),
    };
    // Every attempt sends the file whole (a PUT cannot resume); the failure policy says how often.
    const attempts = new Attempts(options.requests, signal);
    let { url } = address;
    let renewed = false;
    options.onProgress?.({ localPath, key, sent: 0, total: found.size, phase: 'sending' });
    for (;;) {
      try {
        await http.putObject(url, put);
        return { localPath, key, status: 'uploaded', bytes: found.size };
      } catch (error) {
        if (!renewed && isExpiredUrl(error, address.issuedAt)) {
          // The URL expired while the file was hashed or sent: a new one, asked for once as part of this
          // attempt (no retries of its own), and the file sent again.
          renewed = true;
          url = await http.presignUpload(uploadKey(this.plan.file), signal, true, contentMd5);
          continue;
        }
        await attempts.failed(error);
      }
    }
  }
}
