/** The one local-layout resolver: where a file lives below the data root, and which file a local path holds. */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { LOCAL_PATHS, type PathRules } from '../core/platform-paths.js';
import type { FileKind } from './file-types.js';
import { TODAY_GRAMMARS } from './grammars.js';
import { MISSION } from './mission.js';
import { MAX_NAME_BYTES, messages } from './name-parts.js';
import { folderMismatch, type MissionFile, parseName, parsePath, placedAt } from './names.js';
import { assertSafeRelativePath } from './path-safety.js';

/** What each kind's files are called in the layout's description. */
const KIND_WORDS: Record<FileKind, string> = {
  science: 'science files',
  ancillary: 'ancillary files',
  spice: 'SPICE kernels',
  quicklook: 'quicklooks',
  dependency: 'dependency files',
  release: 'release manifests',
};

/**
 * The layout every local data root follows, for messages and hints: each kind's place below the root, science
 * first (`<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename> for science files, …`). Taken from
 * the grammars, so a kind the mission adds is described with them.
 */
export const LOCAL_LAYOUT = TODAY_GRAMMARS.map(
  (grammar) => `<root>/${grammar.layout} for ${KIND_WORDS[grammar.kind]}`,
).join(', ');

/** True when `path` is `root` itself or lies below it (under `rules`, this system's path rules by default). */
export function isInside(root: string, path: string, rules: PathRules = LOCAL_PATHS): boolean {
  const rel = rules.relative(rules.resolve(root), rules.resolve(path));
  return rel === '' || (!rel.startsWith(`..${rules.sep}`) && rel !== '..' && !rules.isAbsolute(rel));
}

/** A file of a naming form this version does not check (a newer service's), known only by its storage path. */
export interface UncheckedFile {
  kind: 'unchecked';
  /** The file name: the path's last segment. */
  name: string;
  /** The storage path, safe but not checked against the naming rules. */
  path: string;
}

/** A file the layout can place: one the naming rules parsed, or one known only by its safe storage path. */
export type LocatedFile = MissionFile | UncheckedFile;

/** The file `name` is when the naming rules of this version read it (whatever its folders); else undefined. */
function readKnownName(name: string): MissionFile | undefined {
  try {
    return parseName(name);
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}

/**
 * Reads a file name or storage path. A bare name must follow the naming rules (nothing else says where it
 * lives); a storage path whose name follows them must have the folders the rules give it. A storage path whose
 * name is of a form this version does not know is taken as it is, when it is safe: safety is not a naming rule.
 * Throws a `ValidationError` saying what is wrong.
 */
export function locateFile(value: string): LocatedFile {
  assertSafeRelativePath(value);
  const slash = value.lastIndexOf('/');
  if (slash < 0) return parseName(value);
  const name = value.slice(slash + 1);
  // The path is safe and its name read once: what is left of `parsePath` is the check of its folders.
  const file = readKnownName(name);
  if (file) return placedAt(value, file);
  // The download's part and record files sit beside the file and need room for their suffixes.
  const bytes = Buffer.byteLength(name);
  if (bytes > MAX_NAME_BYTES) throw new ValidationError([messages.tooLong(name, bytes)]);
  return { kind: 'unchecked', name, path: value };
}

/**
 * The absolute local path of a file below `root`: `<root>/<its storage path>`, which its kind's grammar gives
 * (`<root>/imap/<instrument>/<data_level>/<year>/<month>/<name>` for science, `<root>/imap/spice/<folder>/<name>`
 * for a SPICE kernel, … see `LOCAL_LAYOUT`); a file of a newer naming form at `<root>/<its path>`. `file` is a
 * located file, a name or a storage path (see `locateFile`).
 */
export function resolveLocalPath(root: string, file: LocatedFile | string): string {
  const located = typeof file === 'string' ? locateFile(file) : file;
  const base = resolvedRoot(root);
  const target = resolve(base, ...located.path.split('/'));
  // `target` is normalized and built on `base`: below it exactly when it starts with `base` and a separator.
  const prefix = base.endsWith(sep) ? base : `${base}${sep}`;
  if (!target.startsWith(prefix) || target.length === prefix.length) {
    // Unreachable for paths that passed the safety rules; kept as the last line of defence.
    throw new ValidationError([`Refusing ${located.path}: it would land outside the data root ${root}.`]);
  }
  return target;
}

/** The last absolute root resolved: a batch resolves thousands of paths below one root. */
let lastRoot: { root: string; resolved: string } | undefined;

/** `resolve(root)`, kept for an absolute root (a relative one depends on the working folder at each call). */
function resolvedRoot(root: string): string {
  if (lastRoot?.root === root) return lastRoot.resolved;
  const resolved = resolve(root);
  if (isAbsolute(root)) lastRoot = { root, resolved };
  return resolved;
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

/**
 * Why a file found at `localPath` is in the wrong folder for its name, with the path it belongs at; undefined when
 * its folders agree with the name or say nothing. Below `root` a file lies at the root's top (a loose file) or at
 * its place in the layout. Elsewhere, folders ending in a layout tree (`…/imap/…` at the depth the name's place
 * has: `…/imap/<instrument>/<level>/<year>/<month>/` for science, `…/imap/spice/<folder>/` for a kernel) are held to
 * that tree's place; other folders say nothing about the file.
 */
export function misplacedFile(root: string, localPath: string, file: MissionFile): string | undefined {
  const absolute = resolve(localPath);
  const depth = file.path.split('/').length;
  let segments: string[];
  let base: string;
  if (isInside(root, absolute)) {
    segments = relative(resolve(root), absolute).split(sep);
    if (segments.length === 1) return undefined;
    base = resolve(root);
  } else {
    const all = absolute.split(sep);
    segments = all.slice(-depth);
    if (segments.length < depth || segments[0] !== MISSION) return undefined;
    base = all.slice(0, -depth).join(sep) || sep;
  }
  if (segments.join('/') === file.path) return undefined;
  const expected = join(base, ...file.path.split('/'));
  return `${localPath} is in the wrong folder: ${folderMismatch(segments, file)}; expected ${expected}.`;
}
