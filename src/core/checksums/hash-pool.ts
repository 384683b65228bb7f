/**
 * Whole files hashed on a few threads of their own: `verify` reads a data root at the disk's speed, each file in
 * one pass, while the main thread only schedules and compares.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { abortedError } from '../batch.js';
import { type ChecksumAlgorithm, hashesInBackground } from './checksum.js';
import { digestOfFile } from './file-digest.js';
import { HASH_THREAD_SOURCE } from './hash-thread-source.js';

/** What hashing one whole file found. */
export interface FileHash {
  digest: Buffer;
  /** Bytes read: the file's size as it was hashed. */
  size: number;
  mtimeMs: number;
  ino: number;
}

/** A file not read because its size was not the one expected (see `FileHashPool.hashIfSize`). */
export interface SizeDiffers {
  sizeDiffers: true;
  /** The size it has. */
  size: number;
}

/**
 * A file that could not be hashed; `code` is the system's (`ENOENT` when it vanished); `measuring` when it could not
 * even be measured (`hashIfSize`), whatever the reason.
 */
export class FileHashError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly measuring = false,
  ) {
    super(message);
    this.name = 'FileHashError';
  }
}

interface Job {
  id: number;
  path: string;
  algorithm: ChecksumAlgorithm;
  /** The size the file must have to be read, when asked. */
  expectedSize: number | undefined;
  /** Bytes the job will read, as far as known: small jobs are handed to a thread several at a time. */
  weight: number;
  resolve: (hash: FileHash | SizeDiffers) => void;
  reject: (error: Error) => void;
  onBytes: ((bytes: number) => void) | undefined;
}

interface Answer {
  id: number;
  progress?: number;
  digest?: Uint8Array;
  differs?: boolean;
  size?: number;
  mtimeMs?: number;
  ino?: number;
  error?: string;
  code?: string;
  measuring?: boolean;
}

/** A thread and the jobs handed to it, in its order. */
interface Thread {
  worker: Worker;
  jobs: Map<number, Job>;
  weight: number;
}

/** Threads by default: two (a disk rarely serves more in parallel, and the machine has other work), at most the cores. */
export const DEFAULT_HASH_THREADS = Math.max(1, Math.min(2, availableParallelism()));

/**
 * Jobs a thread holds at most: two at least whatever their size (one read while the main thread answers the other
 * and hands the next, so a thread never waits for it), more while they add up to SMALL_JOBS_BYTES.
 */
export const JOBS_PER_THREAD = 32;
const SMALL_JOBS_BYTES = 16 * 1024 * 1024;

/**
 * A small pool of hashing threads. Each `hash` takes one whole file; files beyond what the threads hold wait
 * their turn in order. CRC-32C and CRC-64/NVME (JavaScript tables, loaded by the main thread) hash in the main
 * thread.
 */
export class FileHashPool {
  readonly #threads: number;
  readonly #all: Thread[] = [];
  readonly #queue: Job[] = [];
  #nextId = 0;
  #closed = false;
  #dispatching = false;

  constructor(
    threads = DEFAULT_HASH_THREADS,
    private readonly signal?: AbortSignal | undefined,
  ) {
    this.#threads = Math.max(1, threads);
    signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** Threads at most. */
  get threads(): number {
    return this.#threads;
  }

  /** Starts the threads now, so that they are ready by the first file (they start in tens of milliseconds). */
  start(): void {
    while (!this.#closed && this.#all.length < this.#threads) this.#spawn().worker.unref();
  }

  /** The digest of the whole file at `path`; `onBytes` hears of bytes read as they are. */
  hash(path: string, algorithm: ChecksumAlgorithm, onBytes?: (bytes: number) => void): Promise<FileHash> {
    return this.#submit(path, algorithm, undefined, undefined, onBytes) as Promise<FileHash>;
  }

  /**
   * The file at `path` measured (not through a link) and, when it has `expectedSize` bytes, hashed as `hash`
   * does; otherwise its size. A file that cannot be measured rejects with a `FileHashError` that is `measuring`.
   */
  hashIfSize(
    path: string,
    algorithm: ChecksumAlgorithm,
    expectedSize: number,
    onBytes?: (bytes: number) => void,
  ): Promise<FileHash | SizeDiffers> {
    return this.#submit(path, algorithm, expectedSize, expectedSize, onBytes);
  }

  /** Like `hash`, for a file whose size (`sizeHint`) is known: small ones are handed out several at a time. */
  hashSized(
    path: string,
    algorithm: ChecksumAlgorithm,
    sizeHint: number,
    onBytes?: (bytes: number) => void,
  ): Promise<FileHash> {
    return this.#submit(path, algorithm, undefined, sizeHint, onBytes) as Promise<FileHash>;
  }

  /** Ends the threads; hashes still waiting or running reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const reason = this.signal?.aborted
      ? abortedError(this.signal)
      : new Error('The hashing threads are closed.');
    for (const job of this.#queue) job.reject(reason);
    this.#queue.length = 0;
    for (const thread of this.#all) {
      for (const job of thread.jobs.values()) job.reject(reason);
      thread.jobs.clear();
      void thread.worker.terminate();
    }
  }

  #submit(
    path: string,
    algorithm: ChecksumAlgorithm,
    expectedSize: number | undefined,
    sizeHint: number | undefined,
    onBytes: ((bytes: number) => void) | undefined,
  ): Promise<FileHash | SizeDiffers> {
    if (this.signal?.aborted) return Promise.reject(abortedError(this.signal));
    if (this.#closed) return Promise.reject(new Error('The hashing threads are closed.'));
    if (!hashesInBackground(algorithm)) return this.#hashHere(path, algorithm, expectedSize, onBytes);
    return new Promise((resolve, reject) => {
      // A file of unknown size counts as a large one.
      const weight = sizeHint ?? SMALL_JOBS_BYTES;
      this.#queue.push({
        id: this.#nextId++,
        path,
        algorithm,
        expectedSize,
        weight,
        resolve,
        reject,
        onBytes,
      });
      // Files asked for in the same turn go to a thread in one message.
      if (this.#dispatching) return;
      this.#dispatching = true;
      queueMicrotask(() => {
        this.#dispatching = false;
        this.#dispatch();
      });
    });
  }

  /** Hands waiting jobs to the threads that hold the fewest, each thread's share in one message. */
  #dispatch(): void {
    if (this.#closed) return;
    this.start();
    const batches = new Map<Thread, Job[]>();
    let taken = 0;
    for (const job of this.#queue) {
      const thread = this.#roomFor(job);
      if (!thread) break;
      thread.jobs.set(job.id, job);
      thread.weight += job.weight;
      const batch = batches.get(thread);
      if (batch) batch.push(job);
      else batches.set(thread, [job]);
      taken += 1;
    }
    if (taken === 0) return;
    this.#queue.splice(0, taken);
    for (const [thread, jobs] of batches) {
      thread.worker.ref();
      thread.worker.postMessage(
        jobs.map(({ id, path, algorithm, expectedSize }) => ({ id, path, algorithm, size: expectedSize })),
      );
    }
  }

  /** The thread holding the fewest jobs, when it has room for `job`. */
  #roomFor(job: Job): Thread | undefined {
    let least: Thread | undefined;
    for (const thread of this.#all) if (!least || thread.jobs.size < least.jobs.size) least = thread;
    if (!least) return undefined;
    const held = least.jobs.size;
    if (held < 2 || (held < JOBS_PER_THREAD && least.weight + job.weight <= SMALL_JOBS_BYTES)) return least;
    return undefined;
  }

  #spawn(): Thread {
    const thread: Thread = {
      worker: new Worker(HASH_THREAD_SOURCE, { eval: true }),
      jobs: new Map(),
      weight: 0,
    };
    this.#all.push(thread);
    thread.worker.on('message', (answers: Answer[]) => {
      for (const answer of answers) this.#answer(thread, answer);
      if (thread.jobs.size === 0) thread.worker.unref(); // An idle thread does not keep the process alive.
      this.#dispatch();
    });
    thread.worker.on('error', (error) => {
      this.#all.splice(this.#all.indexOf(thread), 1);
      for (const job of thread.jobs.values()) job.reject(error);
      thread.jobs.clear();
      this.#dispatch();
    });
    return thread;
  }

  #answer(thread: Thread, answer: Answer): void {
    const job = thread.jobs.get(answer.id);
    if (!job) return;
    if (answer.progress) job.onBytes?.(answer.progress);
    if (answer.digest === undefined && answer.error === undefined && !answer.differs) return;
    thread.jobs.delete(answer.id);
    thread.weight -= job.weight;
    if (thread.jobs.size === 0) thread.weight = 0;
    if (answer.error !== undefined) {
      job.reject(new FileHashError(answer.error, answer.code, answer.measuring === true));
    } else if (answer.differs) job.resolve({ sizeDiffers: true, size: answer.size as number });
    else {
      const digest = answer.digest as Uint8Array;
      job.resolve({
        digest: Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength),
        size: answer.size as number,
        mtimeMs: answer.mtimeMs as number,
        ino: answer.ino as number,
      });
    }
  }

  async #hashHere(
    path: string,
    algorithm: ChecksumAlgorithm,
    expectedSize: number | undefined,
    onBytes: ((bytes: number) => void) | undefined,
  ): Promise<FileHash | SizeDiffers> {
    const { lstat } = await import('node:fs/promises');
    const fail = (error: unknown, measuring = false) => {
      const code = (error as NodeJS.ErrnoException).code;
      return new FileHashError(error instanceof Error ? error.message : String(error), code, measuring);
    };
    const stats = await lstat(path).catch((error: unknown) => {
      throw fail(error, expectedSize !== undefined);
    });
    if (expectedSize !== undefined && stats.size !== expectedSize)
      return { sizeDiffers: true, size: stats.size };
    if (!stats.isFile()) throw new FileHashError('not a regular file', 'ENOTFILE');
    const digest = await digestOfFile(path, algorithm, this.signal, fail);
    onBytes?.(stats.size);
    return { digest, size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino };
  }
}
