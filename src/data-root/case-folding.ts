/**
 * Whether a data root's file system folds case (APFS's default, NTFS, exFAT, FAT): there `IMAP_x.mk` and
 * `imap_x.mk` are one file, so two archive names that differ only in case cannot both be kept. Asked of the file
 * system itself, once per data root and run: the same system can mount a folding disk beside one that is not.
 */
import { existsSync, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { STATE_NAMES, stateFolder } from './state-folder.js';

/** Answers whether the file system of a data root folds case; a test gives a fake one. */
export type CaseProbe = (root: string) => boolean;

/** The answers of this run, per data root (resolved). */
const answers = new Map<string, boolean>();

/**
 * True when the data root's file system folds case: a file made with an upper-case name in the root's state
 * folder is found under its lower-case twin. Asked once per root and run. A probe that cannot be made answers
 * true: refusing a second name that may be the same file keeps the first one's bytes, whereas the opposite
 * answer could let one download replace the other's file.
 */
export function foldsCase(root: string): boolean {
  const key = resolve(root);
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = probeCaseFolding(key);
    answers.set(key, answer);
  }
  return answer;
}

function probeCaseFolding(root: string): boolean {
  const folder = stateFolder(root);
  const name = `${STATE_NAMES.caseProbe}${process.pid}-${Math.random().toString(36).slice(2, 8).toUpperCase()}.TMP`;
  const probe = join(folder, name);
  try {
    mkdirSync(folder, { recursive: true });
    writeFileSync(probe, '', { flag: 'wx' });
  } catch {
    return true;
  }
  try {
    return existsSync(join(folder, name.toLowerCase()));
  } finally {
    try {
      unlinkSync(probe);
    } catch {
      // A probe left behind is an empty file in the state folder, which nothing reads.
    }
  }
}
