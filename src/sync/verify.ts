/**
 * `verify`: every held file in scope hashed, whatever its times say, and compared with the checksum recorded
 * when the tool verified it, or (a file the tool did not download) with the one the archive states; corrupt
 * files fetched again on request. Each pass leaves in the download record when each file was last found whole.
 */

import { abortedError } from '../core/batch.js';
import type { WithRequests } from '../core/call-settings.js';
import { FileHashPool } from '../core/checksums/hash-pool.js';
import { AbortedError, ValidationError } from '../core/errors.js';
import { statusParams } from '../coverage/run.js';
import { DataRoot } from '../data-root/index.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { HashAhead } from './verify-ahead.js';
import type { VerifyHttp, VerifyOptions, VerifyReport } from './verify-entries.js';
import { VerifyPass } from './verify-pass.js';
import { askScope, localPathOf } from './verify-scope.js';

export {
  countStatuses,
  type VerifiedAgainst,
  type VerifyEntry,
  type VerifyHttp,
  type VerifyOptions,
  type VerifyProgress,
  type VerifyReport,
  type VerifyStatus,
} from './verify-entries.js';

/** The checks `verify` makes of its options before anything is read. */
export function verifyParams(filters: QueryFilters, options: Pick<VerifyOptions, 'notVerifiedSince'>): void {
  statusParams(filters);
  const since = options.notVerifiedSince;
  if (since !== undefined && Number.isNaN(since.getTime())) {
    throw new ValidationError(['notVerifiedSince is not a valid date.']);
  }
}

/**
 * Verifies the files of the data root within the filters' scope (see `VerifyOptions`). Rejects with an
 * `AbortedError` carrying the entries settled so far as `results` when cancelled; the record keeps every
 * file settled before.
 */
export async function verifyFiles(
  http: VerifyHttp,
  filters: QueryFilters,
  options: VerifyOptions & WithRequests,
): Promise<VerifyReport> {
  verifyParams(filters, options);
  const params = statusParams(filters);
  const { signal } = options;
  // Before anything is asked of the service: a root that is not there, or no folder, is a mistyped path, never
  // a pass with nothing to verify.
  const root = await DataRoot.open(options.dataDir, { existing: true });
  // The threads start while the archive is asked and the root read, ready by the first file.
  const pool = new FileHashPool(options.threads, signal);
  pool.start();
  let pass: VerifyPass | undefined;
  let ahead: HashAhead | undefined;
  try {
    const asked = askScope(http, params, filters, options);
    const { files } = await asked.local;
    const toLocal = localPathOf(options.dataDir);
    // The root is listed long before the archive answers: the files the record vouches for are hashed meanwhile.
    const record = await root.verified(files);
    ahead = new HashAhead(pool, record);
    ahead.start(files, toLocal, options.notVerifiedSince?.getTime(), asked.scope);
    const { held, extras } = await asked.scope;
    pass = new VerifyPass(http, record, options, pool, ahead);
    for (const entry of extras) pass.settle(entry);
    await pass.run(held, toLocal);
    if (options.repair) await pass.repair();
    return pass.report(held.length);
  } catch (error) {
    if (signal?.aborted) {
      throw new AbortedError(abortedError(signal).message, {
        cause: signal.reason,
        results: pass?.settledEntries() ?? [],
      });
    }
    throw error;
  } finally {
    ahead?.close();
    await root.close();
    pool.close();
  }
}
