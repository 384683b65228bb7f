/**
 * The local path rules of the system the tool runs on, chosen once: Windows' (`\` separates folders as `/` does,
 * drive letters, `~\`) or POSIX's (`/` alone; a `\` is a character of a name). Callers take the rules as a
 * parameter that defaults to `LOCAL_PATHS`, so a test runs Windows' rules anywhere by passing `path.win32`.
 */
import { type PlatformPath, posix, win32 } from 'node:path';

/** A system's path rules: `path.posix` or `path.win32`. */
export type PathRules = PlatformPath;

/** The path rules of the system the tool runs on. */
export const LOCAL_PATHS: PathRules = process.platform === 'win32' ? win32 : posix;

/** True when `\` separates folders under `rules` (Windows'), as `/` does everywhere. */
export function backslashSeparates(rules: PathRules = LOCAL_PATHS): boolean {
  return rules.sep === '\\';
}

/** A local path as typed, its separators written `/`: `\` too under Windows' rules, nothing else elsewhere. */
export function withForwardSlashes(path: string, rules: PathRules = LOCAL_PATHS): string {
  return backslashSeparates(rules) ? path.replaceAll('\\', '/') : path;
}

/** A local path's last segment (a file's name), after the last separator `rules` know. */
export function lastSegment(path: string, rules: PathRules = LOCAL_PATHS): string {
  return withForwardSlashes(path, rules).split('/').pop() ?? '';
}

/** True when a local path as typed ends with a separator (`imap/mag/`, or `imap\mag\` under Windows' rules). */
export function endsWithSeparator(path: string, rules: PathRules = LOCAL_PATHS): boolean {
  return withForwardSlashes(path, rules).endsWith('/');
}
