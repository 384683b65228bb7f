/** How storage paths are written into request paths: unsafe paths are refused before anything is sent. */
import { ValidationError } from '../core/errors.js';
import { isPlainPath, unsafePathReason } from '../naming/path-safety.js';

/** Encodes a storage path for a request path; unsafe paths are refused before anything is sent. */
export function encodePath(path: string, what: string): string {
  const reason = unsafePathReason(path);
  if (reason) throw new ValidationError([`Invalid ${what} ${JSON.stringify(path)}: ${reason}.`]);
  // A plain path (every storage path of the archive) holds only what a URL's path carries as it is.
  if (isPlainPath(path)) return path;
  return path.split('/').map(encodeURIComponent).join('/');
}
