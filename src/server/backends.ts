/**
 * Picks and opens the server's store and index from its options: a folder, or a backend registered by the URL
 * scheme it is named by (`s3://`); the in-memory index or PostgreSQL (`postgres://`). The AWS SDK and `pg` are
 * loaded only when asked for, so the embedded default starts as fast as before.
 */
import { StoreError, UsageError } from '../core/errors.js';
import { MemoryIndex } from './metadata/memory-index.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import { FolderStore } from './objects/folder-store.js';
import type { ObjectStore, StoredObject } from './objects/object-store.js';
import type { UrlSigner } from './objects/presign.js';

/** Where objects and records live. */
export interface BackendOptions {
  /** A folder, or a backend's URL (`s3://BUCKET[/PREFIX]`). */
  store: string;
  /** The S3 endpoint of an S3-compatible store (path-style addressing); AWS S3 when not given. */
  s3Endpoint?: string | undefined;
  /** The bucket's region; default `us-east-1`. */
  s3Region?: string | undefined;
  /** Explicit S3 credentials (tests); the standard AWS chain otherwise. */
  s3Credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
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

/** A kind of store named by a URL scheme in `--store`; anything without a scheme is a folder. */
export interface StoreBackend {
  /** The scheme, lower case, without `:` (`s3`). */
  scheme: string;
  /** The form of its locations, for messages (`s3://BUCKET[/PREFIX]`). */
  form: string;
  /** True when `location` has the backend's form. */
  accepts(location: string): boolean;
  /** Opens the store (not yet checked to answer). */
  open(location: string, options: BackendOptions): Promise<ObjectStore>;
}

const STORE_BACKENDS = new Map<string, StoreBackend>();

/** Adds a backend for `--store` locations of its scheme (one backend per scheme). */
export function registerStoreBackend(backend: StoreBackend): void {
  if (STORE_BACKENDS.has(backend.scheme))
    throw new Error(`A store backend for ${backend.scheme}: is registered.`);
  STORE_BACKENDS.set(backend.scheme, backend);
}

registerStoreBackend({
  scheme: 's3',
  form: 's3://BUCKET[/PREFIX]',
  accepts: (location) => /^s3:\/\/[^/]/.test(location),
  async open(location, options) {
    const { S3Store } = await import('./objects/s3-store.js');
    try {
      return new S3Store({
        url: location,
        endpoint: options.s3Endpoint,
        region: options.s3Region,
        credentials: options.s3Credentials,
      });
    } catch (error) {
      throw new StoreError((error as Error).message, { hint: 'Example: --store s3://my-bucket/archive' });
    }
  },
});

/**
 * The scheme a `--store` location starts with (`s3` of `s3://b`), lower case; undefined for a folder. A single
 * letter is a Windows drive (`C:\archive`), not a scheme.
 */
export function storeScheme(location: string): string | undefined {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(location);
  return match?.[1] && match[1].length > 1 ? match[1].toLowerCase() : undefined;
}

/** The forms `--store` takes, for messages: a folder, then each backend's. */
function knownStores(): string {
  return ['a folder', ...[...STORE_BACKENDS.values()].map((backend) => backend.form)].join(', ');
}

/**
 * The backend a `--store` location names; undefined for a folder. A scheme no backend has, or a location not
 * of its backend's form, is refused (UsageError) naming the forms that are known.
 */
export function storeBackendOf(location: string): StoreBackend | undefined {
  const scheme = storeScheme(location);
  if (scheme === undefined) return undefined;
  const backend = STORE_BACKENDS.get(scheme);
  if (backend?.accepts(location)) return backend;
  const what = backend ? `is not of the form ${backend.form}` : `names no known kind of store (${scheme}:)`;
  throw new UsageError(`--store ${JSON.stringify(location)} ${what}; give one of: ${knownStores()}.`);
}

/** True when `store` names a backend by its scheme (a bucket) rather than a folder; throws for an unknown one. */
export function isBucketStore(store: string): boolean {
  return storeBackendOf(store) !== undefined;
}

async function openStore(
  options: BackendOptions,
): Promise<{ store: ObjectStore; signer: UrlSigner | undefined }> {
  const backend = storeBackendOf(options.store);
  if (!backend) {
    const store = await FolderStore.open(options.store, {
      uploadIdleTimeoutMs: options.uploadIdleTimeoutMs,
      secret: options.secret,
    });
    return { store, signer: store.signer };
  }
  const store = await backend.open(options.store, options);
  try {
    await store.check();
  } catch (error) {
    await store.close();
    throw error;
  }
  return { store, signer: undefined };
}

/** Opens the store and the index, each checked to answer; rejects with a StoreError saying which and why. */
export async function openBackends(options: BackendOptions): Promise<Backends> {
  const { store, signer } = await openStore(options);
  try {
    let index: MetadataIndex;
    if (options.indexUrl) {
      if (!/^postgres(ql)?:\/\//.test(options.indexUrl)) {
        throw new StoreError('The index must be a PostgreSQL URL.', {
          hint: 'Give --index postgres://USER:PASS@HOST:PORT/DB (or MISSION_DATA_INDEX_URL).',
        });
      }
      const { PostgresIndex } = await import('./metadata/postgres-index.js');
      index = await PostgresIndex.open(options.indexUrl);
    } else {
      index = new MemoryIndex(await store.list());
    }
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
