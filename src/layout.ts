/** The one local-layout resolver: where a file lives below the data root, and which file a local path holds. */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ValidationError } from './errors.js';
import { type MissionFile, parsePath, parsePathOrName } from './naming.js';

/** The layout every local data root follows, for messages and hints. */
export const LOCAL_LAYOUT = '<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename>';

/** True when `path` is `root` itself or lies below it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The absolute local path of a file below `root`: `<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<name>`
 * (ancillary: `<root>/imap/ancillary/<instrument>/<name>`). `file` is a parsed file, a name or a storage path.
 */
export function resolveLocalPath(root: string, file: MissionFile | string): string {
  const parsed = typeof file === 'string' ? parsePathOrName(file) : file;
  const target = resolve(root, ...parsed.path.split('/'));
  if (!isInside(root, target)) {
    // Unreachable for names that passed the naming rules; kept as the last line of defence.
    throw new ValidationError([`Refusing ${parsed.path}: it would land outside the data root ${root}.`]);
  }
  return target;
}

/**
 * The file a local path holds, when that path lies below `root` in the expected layout. Throws a
 * `ValidationError` saying what is wrong otherwise.
 */
export function fileFromLocalPath(root: string, localPath: string): MissionFile {
  const absolute = resolve(localPath);
  if (!isInside(root, absolute)) {
    throw new ValidationError([`${localPath} is not inside the data root ${resolve(root)}.`]);
  }
  const rel = relative(resolve(root), absolute).split(sep).join('/');
  return parsePath(rel);
}
