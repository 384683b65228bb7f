/**
 * Opens the server's store and index, each of the backend its location names (`backend-registry.ts` decides
 * which), and lists the store for `--reindex`.
 */
import { indexBackendFor, type StoreSettings, storeBackendFor } from './backend-registry.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore, StoredObject } from './objects/object-store.js';
import type { UrlSigner } from './objects/presign.js';

/** Where objects and records live, with the settings of their backends. */
export interface BackendOptions extends StoreSettings {
  /** A folder, or a backend's URL (`s3://BUCKET[/PREFIX]`). */
  store: string;
  /** `postgres://USER:PASS@HOST:PORT/DB`; the in-memory index, derived from the store, when not given. */
  indexUrl?: string | undefined;
  uploadIdleTimeoutMs?: number | undefined;
  secret?: string | undefined;
}

/** An opened store and index. */
export interface Backends {
  store: ObjectStore;
  index: MetadataIndex;
  /** The signer of the folder store's own URLs; undefined for a store that signs its own. */
  signer: UrlSigner | undefined;
}

/** True when `store` names a backend by its scheme (a bucket) rather than a folder; throws for an unknown one. */
export function isBucketStore(store: string): boolean {
  return storeBackendFor(store).localFolder === undefined;
}

/** Opens the store and the index, each checked to answer; rejects with a StoreError saying which and why. */
export async function openBackends(options: BackendOptions): Promise<Backends> {
  const settings: Readonly<Record<string, unknown>> = { ...options };
  const { store, signer } = await storeBackendFor(options.store).open(options.store, settings, options);
  try {
    const index = await indexBackendFor(options.indexUrl).open(options.indexUrl, store);
    return { store, index, signer };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Closes the store and the index. */
export async function closeBackends({ store, index }: Pick<Backends, 'store' | 'index'>): Promise<void> {
  await Promise.all([store.close(), index.close()]);
}

/** What `reindex` did. */
export interface ReindexReport {
  /** Objects listed that pass the naming rules. */
  listed: number;
  /** Records added (the others had one already, or are uploads being confirmed). */
  added: number;
  /** Keys in the store that break the naming rules, not indexed, each with the rule it breaks. */
  skipped: { key: string; problem: string }[];
}

/** Lists the store and adds a record for every object whose path passes the naming rules; the service goes on. */
export async function reindex(store: ObjectStore, index: MetadataIndex): Promise<ReindexReport> {
  const skipped: ReindexReport['skipped'] = [];
  const objects: StoredObject[] = await store.list('', (key, problem) => skipped.push({ key, problem }));
  const added = await index.addAll(objects);
  return { listed: objects.length, added, skipped };
}
