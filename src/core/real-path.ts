/**
 * The real path of a file or folder. Node's native realpath (the system's own, and what `fs/promises` uses) fails
 * on some Windows RAM disks and virtual drives, whose volumes the system cannot
 * resolve to a name (it answers EISDIR or ENOENT): there the JavaScript realpath, which walks the path one `lstat` at a time, still answers.
 */
import { realpath as realpathByLstat, realpathSync } from 'node:fs';
import { realpath as nativeRealpath } from 'node:fs/promises';
import { promisify } from 'node:util';

/** The resolvers used, replaceable by tests (which make the native one fail). */
export const realPathOps = {
  native: nativeRealpath,
  nativeSync: realpathSync.native,
  walking: promisify(realpathByLstat),
  walkingSync: realpathSync,
};

/** The real path of `path`: the native resolver's, or the walking one's where the native one fails. */
export async function realPath(path: string): Promise<string> {
  try {
    return await realPathOps.native(path);
  } catch (error) {
    return realPathOps.walking(path).catch(() => Promise.reject(error));
  }
}

/** The synchronous `realPath`. */
export function realPathSync(path: string): string {
  try {
    return realPathOps.nativeSync(path);
  } catch (error) {
    try {
      return realPathOps.walkingSync(path);
    } catch {
      throw error;
    }
  }
}
