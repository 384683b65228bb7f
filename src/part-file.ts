/**
 * The life of a download's part file: opened beside its destination, written at offsets, then either
 * committed (renamed over the destination, only once every byte has arrived) or discarded.
 *
 * Writes (~1 MiB each), truncation and closing are synchronous, as in curl and aria2: handing them to the
 * thread pool costs more than they do when writes land in the page cache, and on a machine of two cores that
 * thread competes with the one receiving. Opening and renaming stay asynchronous: they wait on the file
 * system's journal, at times for milliseconds, and meanwhile the other transfers go on.
 */
import { closeSync, ftruncateSync, open as openCallback, writevSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { LocalFileError } from './errors.js';

/** A part file being written; `commit` or `discard` ends it. */
export class PartFile {
  #closed = false;
  #settled = false;

  private constructor(
    /** The destination the part becomes. */
    readonly destination: string,
    /** The part file's own path. */
    readonly path: string,
    private readonly fd: number,
  ) {}

  /** Opens (creating or emptying) `<destination>.part`; the destination's folder must exist. */
  static async open(destination: string): Promise<PartFile> {
    const path = `${destination}.part`;
    const fd = await new Promise<number>((resolve, reject) =>
      openCallback(path, 'w', (error, descriptor) => (error ? reject(error) : resolve(descriptor))),
    );
    return new PartFile(destination, path, fd);
  }

  /** Writes `buffers` (`size` bytes in all) at `position`, finishing short writes. */
  write(buffers: readonly Buffer[], size: number, position: number): void {
    try {
      let done = writevSync(this.fd, buffers as Buffer[], position);
      if (done < size) {
        // Short writes are rare on regular files; finish the rest from one joined buffer.
        const rest = Buffer.concat(buffers as Buffer[]).subarray(done);
        let offset = 0;
        while (done < size) {
          const written = writevSync(this.fd, [rest.subarray(offset)], position + done);
          if (written === 0) throw new Error('the disk accepted no more bytes');
          done += written;
          offset += written;
        }
      }
    } catch (error) {
      throw localError(`Cannot write ${this.path}`, error);
    }
  }

  /** Empties the part, to start the object again from its first byte. */
  truncate(): void {
    try {
      ftruncateSync(this.fd, 0);
    } catch (error) {
      throw localError(`Cannot write ${this.path}`, error);
    }
  }

  /** Closes the part and renames it over the destination. */
  async commit(): Promise<void> {
    this.#close();
    try {
      await rename(this.path, this.destination);
    } catch (error) {
      throw localError(`Cannot move ${this.path} to ${this.destination}`, error);
    }
    this.#settled = true;
  }

  /** Closes and removes the part (after a failure); never throws: the error being reported is the one that matters. */
  async discard(): Promise<void> {
    try {
      this.#close();
    } catch {
      // Closing failed; removing the file below is what counts.
    }
    if (this.#settled) return;
    this.#settled = true;
    await rm(this.path, { force: true }).catch(() => undefined);
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.fd);
  }
}

/** A local file failure, worded with what was being done. */
export function localError(what: string, error: unknown): LocalFileError {
  if (error instanceof LocalFileError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LocalFileError(`${what}: ${message}`, { cause: error });
}
