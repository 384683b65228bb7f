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

/** How long each probe may take: a store or database that does not answer by then is failing. */
export const PROBE_TIMEOUT_MS = 3_000;

async function probe(
  location: string,
  what: string,
  check: () => Promise<void>,
  timeoutMs: number,
): Promise<BackendHealth> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} ${location} did not answer within ${timeoutMs / 1000} s.`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([check(), late]);
    return { location, ok: true };
  } catch (error) {
    return { location, ok: false, problem: error instanceof Error ? error.message : 'failed' };
  } finally {
    clearTimeout(timer);
  }
}

/** Checks both backends at once, each bounded to `timeoutMs` (3 s). */
export async function healthOf(
  store: ObjectStore,
  index: MetadataIndex,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<HealthReport> {
  const [storeHealth, indexHealth] = await Promise.all([
    probe(store.location, 'The store', () => store.check(), timeoutMs),
    probe(index.location, 'The index', () => index.check(), timeoutMs),
  ]);
  return {
    status: storeHealth.ok && indexHealth.ok ? 'ok' : 'failing',
    store: storeHealth,
    index: indexHealth,
  };
}

/** Seconds a client is asked to wait (`Retry-After`) while the store or the index does not answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
