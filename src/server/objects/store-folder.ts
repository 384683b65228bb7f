/**
 * Why a store folder cannot be used, in the operator's words: a path that is a file (or lies below one) is
 * named as such, never as the errno `mkdir` or `readdir` met (`EEXIST`, `ENOTDIR`).
 */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { StoreError } from '../../core/errors.js';

const HINT = 'Choose a folder for the store; a missing one is created.';

/** True when something other than a folder is at `path`. */
async function isFile(path: string): Promise<boolean> {
  const stats = await stat(path).catch(() => undefined);
  return stats !== undefined && !stats.isDirectory();
}

/** The StoreError of a store folder that could not be made or read, from the `error` met. */
export async function storeFolderError(folder: string, error: unknown): Promise<StoreError> {
  const path = resolve(folder);
  if (await isFile(path)) {
    return new StoreError(`The store ${path} is a file, not a folder.`, { hint: HINT, cause: error });
  }
  for (let parent = dirname(path); parent !== dirname(parent); parent = dirname(parent)) {
    if (await isFile(parent)) {
      return new StoreError(`Cannot make the store folder ${path}: ${parent} is a file, not a folder.`, {
        hint: HINT,
        cause: error,
      });
    }
  }
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new StoreError(`Cannot use ${path} as the store folder (${code}).`, { cause: error });
}
