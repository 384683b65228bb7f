/**
 * The folder store as a backend: every `--store` location without a scheme is a folder of this machine, its
 * path resolved here and nowhere else. The store itself (`folder-store.ts`) is loaded when it is opened.
 */
import { resolve } from 'node:path';
import type { StoreBackend } from '../backend-types.js';

/** The folder a location names, its path resolved against the working folder. */
function folderPath(location: string): string {
  return resolve(location);
}

/** A folder of this machine; objects are files at their storage key below it. */
export const folderBackend: StoreBackend = {
  scheme: undefined,
  what: 'a folder',
  form: 'a folder',
  accepts: () => true,
  localFolder: folderPath,
  settings: [],
  async open(location, _settings, opening) {
    const { FolderStore } = await import('./folder-store.js');
    const store = await FolderStore.open(folderPath(location), opening);
    return { store, signer: store.signer };
  },
};
