/**
 * Whole files hashed on a few threads of their own: `verify` reads a data root at the disk's speed, each file in
 * one pass, while the main thread only schedules and compares.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { abortedError } from '../batch.js';
import { type ChecksumAlgorithm, hashesInBackground } from './checksum.js';
import { digestOfFile } from './file-digest.js';

/**
 * One thread's code: it opens a file (never through a link), reads it through once in 4 MiB reads, and answers
 * with the digest and the stats of the very descriptor it read, telling how far it got every 32 MiB.
 */
const POOL_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, readSync, fstatSync, closeSync, constants } = require('node:fs');
const { createHash } = require('node:crypto');
const { crc32 } = require('node:zlib');
const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
const REPORT_EVERY = 32 * 1024 * 1024;
parentPort.on('message', ({ id, path, algorithm }) => {
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW || 0));
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
    const hash = algorithm === 'crc32' ? undefined : createHash(algorithm);
    let crc = 0;
    let position = 0;
    let reported = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) break;
      const chunk = buffer.subarray(0, read);
      if (hash) hash.update(chunk);
      else crc = crc32(chunk, crc);
      position += read;
      if (position - reported >= REPORT_EVERY) {
        parentPort.postMessage({ id, progress: position - reported });
        reported = position;
      }
    }
    let digest;
    if (hash) digest = hash.digest();
    else { digest = Buffer.alloc(4); digest.writeUInt32BE(crc >>> 0); }
    parentPort.postMessage({
      id, progress: position - reported, digest, size: position,
      mtimeMs: stats.mtimeMs, ino: stats.ino,
    });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error), code: error && error.code });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
});
`;

/** What hashing one whole file found. */
export interface FileHash {
  digest: Buffer;
  /** Bytes read: the file's size as it was hashed. */
  size: number;
  mtimeMs: number;
  ino: number;
}

/** A file that could not be hashed; `code` is the system's (`ENOENT` when it vanished). */
export class FileHashError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'FileHashError';
  }
}

interface Job {
  id: number;
  path: string;
  algorithm: ChecksumAlgorithm;
  resolve: (hash: FileHash) => void;
  reject: (error: Error) => void;
  onBytes: ((bytes: number) => void) | undefined;
}

interface Answer {
  id: number;
  progress?: number;
  digest?: Uint8Array;
  size?: number;
  mtimeMs?: number;
  ino?: number;
  error?: string;
  code?: string;
}

/** Threads by default: two (a disk rarely serves more in parallel, and the machine has other work), at most the cores. */
export const DEFAULT_HASH_THREADS = Math.max(1, Math.min(2, availableParallelism()));

/**
 * A small pool of hashing threads. Each `hash` takes one whole file; files beyond the threads wait their turn
 * in order. CRC-32C and CRC-64/NVME (JavaScript tables, loaded by the main thread) hash in the main thread.
 */
export class FileHashPool {
  readonly #threads: number;
  readonly #idle: Worker[] = [];
  readonly #all: Worker[] = [];
  readonly #queue: Job[] = [];
  readonly #running = new Map<Worker, Job>();
  #nextId = 0;
  #closed = false;

  constructor(
    threads = DEFAULT_HASH_THREADS,
    private readonly signal?: AbortSignal | undefined,
  ) {
    this.#threads = Math.max(1, threads);
    signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** The digest of the whole file at `path`; `onBytes` hears of bytes read as they are. */
  hash(path: string, algorithm: ChecksumAlgorithm, onBytes?: (bytes: number) => void): Promise<FileHash> {
    if (this.signal?.aborted) return Promise.reject(abortedError(this.signal));
    if (this.#closed) return Promise.reject(new Error('The hashing threads are closed.'));
    if (!hashesInBackground(algorithm)) return this.#hashHere(path, algorithm, onBytes);
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, path, algorithm, resolve, reject, onBytes });
      this.#dispatch();
    });
  }

  /** Ends the threads; hashes still waiting or running reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const reason = this.signal?.aborted
      ? abortedError(this.signal)
      : new Error('The hashing threads are closed.');
    for (const job of [...this.#queue, ...this.#running.values()]) job.reject(reason);
    this.#queue.length = 0;
    this.#running.clear();
    for (const worker of this.#all) void worker.terminate();
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#idle.pop() ?? (this.#all.length < this.#threads ? this.#spawn() : undefined);
      if (!worker) return;
      const job = this.#queue.shift() as Job;
      this.#running.set(worker, job);
      worker.ref();
      worker.postMessage({ id: job.id, path: job.path, algorithm: job.algorithm });
    }
  }

  #spawn(): Worker {
    const worker = new Worker(POOL_SOURCE, { eval: true });
    this.#all.push(worker);
    worker.on('message', (answer: Answer) => this.#answer(worker, answer));
    worker.on('error', (error) => {
      const job = this.#running.get(worker);
      this.#running.delete(worker);
      this.#all.splice(this.#all.indexOf(worker), 1);
      job?.reject(error);
      this.#dispatch();
    });
    return worker;
  }

  #answer(worker: Worker, answer: Answer): void {
    const job = this.#running.get(worker);
    if (!job || job.id !== answer.id) return;
    if (answer.progress) job.onBytes?.(answer.progress);
    if (answer.digest === undefined && answer.error === undefined) return;
    this.#running.delete(worker);
    // An idle thread does not keep the process alive.
    worker.unref();
    this.#idle.push(worker);
    if (answer.error !== undefined) job.reject(new FileHashError(answer.error, answer.code));
    else {
      job.resolve({
        digest: Buffer.from(answer.digest as Uint8Array),
        size: answer.size as number,
        mtimeMs: answer.mtimeMs as number,
        ino: answer.ino as number,
      });
    }
    this.#dispatch();
  }

  async #hashHere(
    path: string,
    algorithm: ChecksumAlgorithm,
    onBytes: ((bytes: number) => void) | undefined,
  ): Promise<FileHash> {
    const { lstat } = await import('node:fs/promises');
    const fail = (error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      return new FileHashError(error instanceof Error ? error.message : String(error), code);
    };
    const stats = await lstat(path).catch((error: unknown) => {
      throw fail(error);
    });
    if (!stats.isFile()) throw new FileHashError('not a regular file', 'ENOTFILE');
    const digest = await digestOfFile(path, algorithm, this.signal, fail);
    onBytes?.(stats.size);
    return { digest, size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino };
  }
}
