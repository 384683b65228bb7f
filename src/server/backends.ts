/**
 * Picks and opens the server's store and index from its options: a folder or an S3 bucket (`s3://`), the
 * in-memory index or PostgreSQL (`postgres://`). The AWS SDK and `pg` are loaded only when asked for, so the
 * embedded default starts as fast as before.
 */
import { StoreError } from '../core/errors.js';
import { MemoryIndex } from './metadata/memory-index.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import { FolderStore } from './objects/folder-store.js';
import type { ObjectStore, StoredObject } from './objects/object-store.js';
import type { UrlSigner } from './objects/presign.js';

/** Where objects and records live. */
export interface BackendOptions {
  /** A folder, or `s3://BUCKET[/PREFIX]`. */
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

/** True when `store` names a bucket rather than a folder. */
export function isBucketStore(store: string): boolean {
  return store.startsWith('s3://');
}

async function openStore(
  options: BackendOptions,
): Promise<{ store: ObjectStore; signer: UrlSigner | undefined }> {
  if (!isBucketStore(options.store)) {
    const store = await FolderStore.open(options.store, {
      uploadIdleTimeoutMs: options.uploadIdleTimeoutMs,
      secret: options.secret,
    });
    return { store, signer: store.signer };
  }
  const { S3Store } = await import('./objects/s3-store.js');
  let store: ObjectStore;
  try {
    store = new S3Store({
      url: options.store,
      endpoint: options.s3Endpoint,
      region: options.s3Region,
      credentials: options.s3Credentials,
    });
  } catch (error) {
    throw new StoreError((error as Error).message, { hint: 'Example: --store s3://my-bucket/archive' });
  }
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

/** What `reindex` did. */
export interface ReindexReport {
  /** Objects listed that pass the naming rules. */
  listed: number;
  /** Records added (the others had one already, or are uploads being confirmed). */
  added: number;
  /** Keys in the store that break the naming rules, not indexed. */
  skipped: string[];
}

/** Lists the store and adds a record for every object whose path passes the naming rules; the service goes on. */
export async function reindex(store: ObjectStore, index: MetadataIndex): Promise<ReindexReport> {
  const skipped: string[] = [];
  const objects: StoredObject[] = await store.list('', (key) => skipped.push(key));
  const added = await index.addAll(objects);
  return { listed: objects.length, added, skipped };
}
