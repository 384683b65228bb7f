/**
 * Path safety: what makes a path unsafe to send to the service or to join below a local root. These are not
 * naming rules: a path of a naming form this version does not know may be safe, and a safe path is all a
 * download needs.
 */
import { ValidationError } from '../core/errors.js';

// C0, DEL and C1: every character of Unicode's control category.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is rejected here
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** True when `value` holds a control character (C0, DEL or C1). */
export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTERS.test(value);
}

/** What is wrong with a path, and what to do instead when that is not obvious. */
interface PathProblem {
  what: string;
  advice?: string;
}

/**
 * A path of plain segments (letters, digits, `_` and `-`, with dots inside a segment only): it breaks none of the
 * rules below but, perhaps, that of Windows' device names. Every storage path of the archive is one; a data root's
 * scan checks 100,000 of them, so they are told by one pattern before the rules are tried one by one.
 */
const PLAIN_PATH = /^[\w-]+(?:\.+[\w-]+)*(?:\/[\w-]+(?:\.+[\w-]+)*)*$/;
/** True for a plain path (see PLAIN_PATH): nothing in it needs escaping in a URL either. */
export function isPlainPath(path: string): boolean {
  return PLAIN_PATH.test(path);
}

/** A segment of a plain path named after a Windows device (see WINDOWS_DEVICE_NAMES): its stem is one. */
const PLAIN_DEVICE_SEGMENT = /(?:^|\/)(?:con|prn|aux|nul|com\d|lpt\d)(?:[./]|$)/i;

/**
 * Returns what makes `path` unsafe to use as a storage path or a path below a local root, or undefined
 * when it is safe: absolute paths, `..`, `.` and any other segment starting with a dot (`..;`), empty
 * segments, backslashes, NUL and control characters, percent-encoded forms of any of these, and segments that
 * Linux, macOS or Windows cannot hold as a name (see `unportableSegmentProblem`); the message names the segment
 * where that helps.
 */
export function unsafePathReason(path: string): string | undefined {
  const problem = PLAIN_PATH.test(path)
    ? PLAIN_DEVICE_SEGMENT.test(path)
      ? unportableSegmentProblem(path)
      : undefined
    : (literalPathProblem(path, true) ??
      percentPathProblem(path) ??
      dotLedProblem(path) ??
      unportableSegmentProblem(path));
  if (!problem) return undefined;
  return problem.advice ? `${problem.what}; ${problem.advice}` : problem.what;
}

function literalPathProblem(path: string, nameSegment: boolean): PathProblem | undefined {
  const inSegment = nameSegment ? segmentOf : () => '';
  if (path.length === 0) return { what: 'it is empty' };
  if (path.includes('\u0000')) return { what: `it contains a NUL character${inSegment(path, '\u0000')}` };
  const control = CONTROL_CHARACTERS.exec(path)?.[0];
  if (control !== undefined) return { what: `it contains a control character${inSegment(path, control)}` };
  if (path.includes('\\'))
    return {
      what: `it contains a backslash ('\\')${inSegment(path, '\\')}`,
      advice: "use '/' between folders",
    };
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) {
    return { what: 'it is absolute', advice: 'give a path relative to the data root' };
  }
  const segments = path.split('/');
  if (segments.includes('..')) return { what: "it contains a '..' segment" };
  if (segments.includes('.')) return { what: "it contains a '.' segment" };
  const empty = segments.indexOf('');
  if (empty >= 0) {
    const where =
      empty === segments.length - 1
        ? 'at the end'
        : `after ${JSON.stringify(segments.slice(0, empty).join('/'))}`;
    return { what: `it contains an empty segment ('//' or a trailing '/') ${where}` };
  }
  return undefined;
}

/** ` in the segment "…"` for the segment of `path` that holds `part`, when the path has several segments. */
function segmentOf(path: string, part: string): string {
  const segments = path.split('/');
  if (segments.length < 2) return '';
  const segment = segments.find((candidate) => candidate.includes(part));
  return segment === undefined ? '' : ` in the segment ${JSON.stringify(segment)}`;
}

function dotLedProblem(path: string): PathProblem | undefined {
  const segments = path.split('/');
  // Proxies and stores may treat `..;`, `.../` or `.%2e` like `..`; no folder or file of the store starts with a dot.
  const dotted = segments.find((segment) => segment.startsWith('.'));
  if (dotted !== undefined) {
    return {
      what: `its segment ${JSON.stringify(dotted)} starts with a dot`,
      advice: 'no folder or file of the store does',
    };
  }
  return undefined;
}

/**
 * Characters Windows refuses in a name (`:` on NTFS names an alternate data stream of the file before it, so
 * `c:evil.cdf` would write into a stream of `c`). Control characters and `\` are refused before this is asked.
 */
const WINDOWS_REFUSED_CHARACTERS = /[<>:"|?*]/g;
/** The same characters, for a test that keeps no state (a global pattern's `test` moves its `lastIndex`). */
const HAS_WINDOWS_REFUSED_CHARACTER = /[<>:"|?*]/;
/**
 * How a segment that can be named after a device starts: every device name starts with one of these letters, and
 * no other character upper-cases to a string that is a device name (U+1E9A upper-cases to `A` and a modifier).
 */
const DEVICE_INITIAL = /^[aclnp]/i;

/**
 * Windows' device names: a file named so (any case, any extension, `CON.cdf`, `nul.txt`) opens the device
 * instead. `COM0`/`LPT0` and the superscript digits are in Microsoft's list too; `CONIN$`/`CONOUT$` are the
 * console's.
 */
const WINDOWS_DEVICE_NAMES = /^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9¹²³]|LPT[0-9¹²³])$/;

const PORTABLE_ADVICE = 'a data root must stay usable on Linux, macOS and Windows alike';

/**
 * Why a segment of `path` cannot be a name on every system the tool runs on, so a data root copied between
 * them holds every file: a character Windows refuses, a trailing dot or space (Windows drops it, so two names
 * become one), a Windows device name as the segment or as its stem. Refused on every system alike.
 */
function unportableSegmentProblem(path: string): PathProblem | undefined {
  for (const segment of path.split('/')) {
    // Every path is checked, thousands at a time in a data root's scan: the cheap tests come first.
    if (HAS_WINDOWS_REFUSED_CHARACTER.test(segment)) {
      const refused = [...new Set(segment.match(WINDOWS_REFUSED_CHARACTERS) ?? [])];
      const listed = refused.map((character) => `'${character}'`).join(', ');
      return {
        what: `its segment ${JSON.stringify(segment)} holds ${listed}, which Windows refuses in a name`,
        advice: PORTABLE_ADVICE,
      };
    }
    if (segment.endsWith('.') || segment.endsWith(' ')) {
      const end = segment.endsWith('.') ? 'a dot' : 'a space';
      return {
        what: `its segment ${JSON.stringify(segment)} ends with ${end}, which Windows drops from a name`,
        advice: PORTABLE_ADVICE,
      };
    }
    if (!DEVICE_INITIAL.test(segment)) continue;
    // Windows reads the stem before the first dot, trailing spaces ignored: `CON .cdf` and `con.tar.gz` too.
    const stem = (segment.split('.')[0] ?? '').trimEnd().toUpperCase();
    if (WINDOWS_DEVICE_NAMES.test(stem)) {
      return {
        what: `its segment ${JSON.stringify(segment)} is named after the Windows device ${stem}, which no Windows folder can hold as a file`,
        advice: PORTABLE_ADVICE,
      };
    }
  }
  return undefined;
}

// Servers and file systems differ in how often they decode, so every layer of encoding is looked through.
function percentPathProblem(path: string): PathProblem | undefined {
  if (!path.includes('%')) return undefined;
  const decoded = decodeRepeatedly(path);
  if (decoded !== path) {
    const inner = literalPathProblem(decoded.replaceAll('%', ''), false);
    if (inner) return { ...inner, what: `${inner.what} once percent-decoded` };
    if (decoded.split('/').length !== path.split('/').length)
      return { what: `it contains a percent-encoded '/'${segmentOf(path, '%')}` };
  }
  return { what: `it contains '%'${segmentOf(path, '%')}, which no file path of the store has` };
}

function decodeRepeatedly(value: string): string {
  let current = value;
  for (let round = 0; round < 3; round += 1) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/** Throws a `ValidationError` when `path` is unsafe (see `unsafePathReason`). */
export function assertSafeRelativePath(path: string, what = 'path'): void {
  const reason = unsafePathReason(path);
  if (reason) throw new ValidationError([`Invalid ${what} ${JSON.stringify(path)}: ${reason}.`]);
}
