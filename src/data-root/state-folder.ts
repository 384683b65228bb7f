/**
 * The folder under a data root where the client keeps its state: the verified record, the learned connections,
 * the sync states and locks, the download runs. Hidden, so a scan of the root's files passes it by. Its layout is
 * written here once; only the modules of this folder build a path inside it.
 */
import { join } from 'node:path';

/** The state folder's name under the data root. */
export const STATE_FOLDER = '.mission-data';

/** The names inside the state folder, each kept by one module of this folder. */
export const STATE_NAMES = {
  /**
   * The record of verified downloads (`verified.ts`); its compaction's lock and new copy are `<name>.lock` and
   * `<name>.compact` (`verified-log.ts`).
   */
  verifiedRecord: 'verified.jsonl',
  /** The file whose inode number shows whether the root keeps them, and its record beside it (`verified-inodes.ts`). */
  inodeProbe: 'inode-probe',
  /** What `--connections auto` measured, per host (`learned-connections.ts`). */
  learnedConnections: 'connections.json',
  /** The entries of the download runs working in the root (`runs.ts`). */
  runs: 'runs',
  /** How a sync's files begin: `sync-<hash>.json` its state (`sync-state.ts`), `sync-<hash>.lock` its lock. */
  syncPrefix: 'sync-',
  /** How a lock's name ends (`sync-lock.ts`). */
  lockSuffix: '.lock',
  /** How the probe of case folding begins (`case-folding.ts`). */
  caseProbe: 'CASE-PROBE-',
} as const;

/** The state folder of `root`. */
export function stateFolder(root: string): string {
  return join(root, STATE_FOLDER);
}
