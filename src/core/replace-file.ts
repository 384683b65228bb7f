/**
 * Replacing and removing a file where another program may hold it open. Windows refuses to rename over, or to
 * remove, a file that a viewer, a Python session, an antivirus or the search indexer has open (`EPERM`,
 * `EACCES`, `EBUSY`), usually for a moment only; an SMB share refuses the same way wherever it is mounted. So
 * every system gets the same rule (as graceful-fs gives a Windows rename): a refused replace or removal is
 * tried again with a growing pause for a bounded time, then fails with an error naming the file and saying
 * what to do. Elsewhere these errors are permanent and cost that bounded wait once, before the same failure.
 */
import { renameSync, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { LocalFileError } from './errors.js';

/** The errno codes a file held open elsewhere gives a rename or a removal. */
const HELD_OPEN = new Set(['EPERM', 'EACCES', 'EBUSY']);

/** How long a refused replace or removal is tried again before it fails (about 2.5 s). */
export const HELD_RETRY_TOTAL_MS = 2_500;
const FIRST_PAUSE_MS = 20;
const MAX_PAUSE_MS = 400;

/** The file operations used, replaceable by tests (which inject a refusal). */
export const heldFileOps = { rename, rm, renameSync, rmSync };

/** A file another program held open through every retry: `errno` and `path` say which refusal and where. */
export class FileHeldOpenError extends LocalFileError {
  constructor(
    readonly action: 'replace' | 'remove',
    readonly path: string,
    readonly errno: string,
    cause: unknown,
  ) {
    const seconds = HELD_RETRY_TOTAL_MS / 1000;
    super(
      `Cannot ${action} ${path}: the system refused it (${errno}) for ${seconds} s; another program (a viewer, a Python session, an antivirus, the search indexer) may hold it open.`,
      { cause, hint: `Close the program that has ${path} open, then run the command again.` },
    );
  }
}

/** True when `error` is a refusal that a program holding the file open gives. */
export function isHeldOpen(error: unknown): boolean {
  return HELD_OPEN.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** The pauses between tries: doubling from 20 ms, at most 400 ms each, 2.5 s in all. */
function* pauses(): Generator<number> {
  let spent = 0;
  let pause = FIRST_PAUSE_MS;
  while (spent < HELD_RETRY_TOTAL_MS) {
    const next = Math.min(pause, HELD_RETRY_TOTAL_MS - spent);
    yield next;
    spent += next;
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  }
}

/** Runs `step`, trying it again while the file is held open; then a FileHeldOpenError. */
async function whileHeld(action: 'replace' | 'remove', path: string, step: () => Promise<void>) {
  const wait = pauses();
  for (;;) {
    try {
      return await step();
    } catch (error) {
      const pause = wait.next();
      if (!isHeldOpen(error)) throw error;
      if (pause.done) throw heldError(action, path, error);
      await new Promise((resolve) => setTimeout(resolve, pause.value));
    }
  }
}

/** The synchronous `whileHeld`: the thread sleeps between tries (only ever when a file is refused). */
function whileHeldSync(action: 'replace' | 'remove', path: string, step: () => void): void {
  const wait = pauses();
  for (;;) {
    try {
      step();
      return;
    } catch (error) {
      const pause = wait.next();
      if (!isHeldOpen(error)) throw error;
      if (pause.done) throw heldError(action, path, error);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause.value);
    }
  }
}

function heldError(action: 'replace' | 'remove', path: string, error: unknown): FileHeldOpenError {
  return new FileHeldOpenError(action, path, (error as NodeJS.ErrnoException).code ?? 'EPERM', error);
}

/** Renames `from` over `to` (atomically), trying again while `to` is held open elsewhere. */
export function replaceFile(from: string, to: string): Promise<void> {
  return whileHeld('replace', to, () => heldFileOps.rename(from, to));
}

/** The synchronous `replaceFile`, for callers that must not yield (it blocks only while a file is refused). */
export function replaceFileSync(from: string, to: string): void {
  whileHeldSync('replace', to, () => heldFileOps.renameSync(from, to));
}

/** Removes the file `path` (nothing when it is missing; a link itself, never its target), trying again while held. */
export function removeFile(path: string): Promise<void> {
  return whileHeld('remove', path, () => heldFileOps.rm(path, { force: true }));
}

/** The synchronous `removeFile`. */
export function removeFileSync(path: string): void {
  whileHeldSync('remove', path, () => heldFileOps.rmSync(path, { force: true }));
}
