/** `GET /health`: whether the store and the index answer, for load balancers and operators. */
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore } from './objects/object-store.js';

/** The state of one backend. */
export interface BackendHealth {
  /** Where it is (a folder, a bucket, `memory`, a database URL with its password masked). */
  location: string;
  ok: boolean;
  /** Why not, in one line that names no credential. */
  problem?: string;
}

/** The answer of `/health`: 200 when both answer, 503 otherwise. */
export interface HealthReport {
  status: 'ok' | 'failing';
  store: BackendHealth;
  index: BackendHealth;
}

async function probe(location: string, check: () => Promise<void>): Promise<BackendHealth> {
  try {
    await check();
    return { location, ok: true };
  } catch (error) {
    return { location, ok: false, problem: error instanceof Error ? error.message : 'failed' };
  }
}

/** Checks both backends at once. */
export async function healthOf(store: ObjectStore, index: MetadataIndex): Promise<HealthReport> {
  const [storeHealth, indexHealth] = await Promise.all([
    probe(store.location, () => store.check()),
    probe(index.location, () => index.check()),
  ]);
  return {
    status: storeHealth.ok && indexHealth.ok ? 'ok' : 'failing',
    store: storeHealth,
    index: indexHealth,
  };
}
