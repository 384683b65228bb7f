/**
 * Local paths under each system's rules, chosen once (`core/platform-paths.ts`) and given as `path.win32` here:
 * on Windows a `\` separates folders (cmd and PowerShell complete paths with it), elsewhere it is a character of
 * a name, which the storage-path rules refuse.
 */
import { posix, win32 } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandHome } from '../../src/core/config.js';
import { ValidationError } from '../../src/core/errors.js';
import { endsWithSeparator, lastSegment, withForwardSlashes } from '../../src/core/platform-paths.js';
import { planDownloads } from '../../src/download/batch/plan.js';
import { readTargets } from '../../src/naming/download-targets.js';
import { isInside } from '../../src/naming/layout.js';
import { planUploads } from '../../src/upload/plan.js';

const NAME = 'imap_mag_l1a_norm-mago_20250101_v001.cdf';
const STORAGE = `imap/mag/l1a/2025/01/${NAME}`;
/** A name `upload` takes (today's science files need a major.minor version). */
const UPLOADED = 'imap_mag_l1a_norm-mago_20250101_v001.0001.cdf';
const CWD = 'C:\\Users\\sci';
const ROOT = 'C:\\Users\\sci\\data';

describe("download's targets under Windows' rules", () => {
  it('reads a backslash path inside the data root as the storage path of the file it names', () => {
    for (const typed of [
      `data\\imap\\mag\\l1a\\2025\\01\\${NAME}`,
      `.\\data\\imap\\mag\\l1a\\2025\\01\\${NAME}`,
      `${ROOT}\\imap\\mag\\l1a\\2025\\01\\${NAME}`,
      `c:\\users\\sci\\data\\imap\\mag\\l1a\\2025\\01\\${NAME}`,
      `data/imap\\mag/l1a\\2025/01\\${NAME}`,
      `imap\\mag\\l1a\\2025\\01\\${NAME}`,
    ]) {
      expect(readTargets([typed], ROOT, CWD, win32), typed).toEqual({
        kind: 'files',
        paths: [STORAGE],
        globs: [],
      });
    }
  });

  it('reads a backslash folder and a backslash glob as their slash forms', () => {
    expect(readTargets(['data\\imap\\mag\\l1a\\2025\\01\\'], ROOT, CWD, win32)).toMatchObject({
      kind: 'folder',
      folder: 'imap/mag/l1a/2025/01/',
    });
    const glob = readTargets(['data\\imap\\mag\\l1a\\2025\\01\\*.cdf'], ROOT, CWD, win32);
    expect(glob.kind === 'files' && glob.globs.map((found) => found.pattern)).toEqual([
      'imap/mag/l1a/2025/01/*.cdf',
    ]);
  });

  it('refuses a backslash path outside the data root, naming it as typed', () => {
    expect(() => readTargets([`D:\\elsewhere\\${NAME}`], ROOT, CWD, win32)).toThrow(
      `D:\\elsewhere\\${NAME} is not inside the data root ${ROOT}`,
    );
  });

  it('keeps a backslash a character under POSIX rules, refused as a storage path as before', () => {
    const typed = `data\\imap\\mag\\l1a\\2025\\01\\${NAME}`;
    const read = readTargets([typed], '/home/sci/data', '/home/sci', posix);
    expect(read).toEqual({ kind: 'files', paths: [typed], globs: [] });
    expect(() => planDownloads([typed], '/home/sci/data')).toThrow(ValidationError);
    expect(() => planDownloads([typed], '/home/sci/data')).toThrow("it contains a backslash ('\\')");
  });

  it('tells inside from outside under either rules', () => {
    expect(isInside(ROOT, `${ROOT}\\imap\\x`, win32)).toBe(true);
    expect(isInside(ROOT, 'C:\\Users\\sci\\database\\x', win32)).toBe(false);
    expect(isInside(ROOT, 'D:\\Users\\sci\\data\\x', win32)).toBe(false);
    expect(isInside('/srv/data', '/srv/data/imap', posix)).toBe(true);
  });
});

describe('the home folder of the data root', () => {
  it('expands ~\\ like ~/ under Windows rules', () => {
    const env = { HOME: 'C:\\Users\\sci' };
    expect(expandHome('~\\data', env, win32)).toBe('C:\\Users\\sci\\data');
    expect(expandHome('~/data', env, win32)).toBe('C:\\Users\\sci\\data');
    expect(expandHome('~', env, win32)).toBe('C:\\Users\\sci');
    expect(expandHome('~other\\data', env, win32)).toBe('~other\\data');
  });

  it('leaves ~\\ alone under POSIX rules, where it is a name', () => {
    expect(expandHome('~\\data', { HOME: '/home/sci' }, posix)).toBe('~\\data');
    expect(expandHome('~/data', { HOME: '/home/sci' }, posix)).toBe('/home/sci/data');
  });
});

describe("upload's names", () => {
  it('takes the name after the last backslash under Windows rules', () => {
    const [planned] = planUploads([`data\\imap\\mag\\l1a\\2025\\01\\${UPLOADED}`], win32);
    expect(planned?.file.path).toBe(`imap/mag/l1a/2025/01/${UPLOADED}`);
    expect(() => planUploads([`data\\imap\\mag\\`], win32)).toThrow('is a folder');
  });

  it('reads a backslash as part of the name under POSIX rules, and refuses that name', () => {
    expect(() => planUploads([`data\\${UPLOADED}`], posix)).toThrow(ValidationError);
    expect(() => planUploads([`data\\${UPLOADED}`], posix)).toThrow(`Invalid filename data\\${UPLOADED}`);
    expect(planUploads([`data/${UPLOADED}`], posix)[0]?.file.path).toBe(`imap/mag/l1a/2025/01/${UPLOADED}`);
  });
});

describe('the separators of each system', () => {
  it('are / alone under POSIX rules and both / and \\ under Windows rules', () => {
    expect(withForwardSlashes('a\\b/c', win32)).toBe('a/b/c');
    expect(withForwardSlashes('a\\b/c', posix)).toBe('a\\b/c');
    expect(lastSegment('a\\b/c\\d.cdf', win32)).toBe('d.cdf');
    expect(lastSegment('a/b\\d.cdf', posix)).toBe('b\\d.cdf');
    expect(endsWithSeparator('imap\\mag\\', win32)).toBe(true);
    expect(endsWithSeparator('imap\\mag\\', posix)).toBe(false);
  });
});
