/**
 * The folder under a data root where the client keeps its state: the verified record, the learned connections,
 * the sync states and locks, the download runs. Hidden, so a scan of the root's files passes it by.
 */
import { join } from 'node:path';

/** The state folder's name under the data root. */
export const STATE_FOLDER = '.mission-data';

/** The state folder of `root`. */
export function stateFolder(root: string): string {
  return join(root, STATE_FOLDER);
}
