/**
 * The verified record counts a file's inode number only where the file system keeps them: found by a probe file
 * in the state folder, never assumed. Here (a Linux file system that keeps them) a file put back with the same
 * size and time but a new inode is checked again; on a root whose probe was seen renumbered (exfat-fuse after a
 * remount, simulated by its record), size and time decide alone.
 */
import { copyFile, lstat, mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_FOLDER } from '../../src/data-root/state-folder.js';
import { VerifiedRecord } from '../../src/data-root/verified.js';

const PATH = 'imap/mag/l1a/2024/01/x.cdf';
let root: string;
let file: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'inode-probe-'));
  file = join(root, 'file.cdf');
  await writeFile(file, 'the bytes');
  // Whole seconds, which a copy's utimes can give exactly.
  await utimes(file, 1_700_000_000, 1_700_000_000);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Puts a copy of the file in its place: same size and mtime, a new inode. */
async function replaceWithCopy(): Promise<void> {
  const before = await lstat(file);
  await copyFile(file, `${file}.copy`);
  await utimes(`${file}.copy`, before.atime, before.mtime);
  await rename(`${file}.copy`, file);
  expect((await lstat(file)).ino).not.toBe(before.ino);
}

describe('the inode probe of the verified record', () => {
  it('finds a file system that keeps inode numbers, where a file with a new inode is checked again', async () => {
    const record = await VerifiedRecord.open(root);
    expect(record.inodesStable).toBe(true);
    record.add(PATH, await lstat(file), 'md5:00', true);
    record.close();
    await replaceWithCopy();
    const again = await VerifiedRecord.open(root);
    expect(again.inodesStable).toBe(true);
    expect(again.matches(PATH, await lstat(file))).toBe(false);
    again.close();
  });

  it('on a root whose probe was renumbered, lets size and time decide, and writes the finding down', async () => {
    const first = await VerifiedRecord.open(root);
    first.add(PATH, await lstat(file), 'md5:00', true);
    first.close();
    // As exfat-fuse after a remount: the probe untouched (same change time) but under another number.
    const probe = join(root, STATE_FOLDER, 'inode-probe');
    const stats = await lstat(probe);
    const record = `${probe}.json`;
    await writeFile(record, JSON.stringify({ ino: stats.ino + 1, ctimeMs: stats.ctimeMs, stable: true }));
    await replaceWithCopy();
    // A reader (status) sees it too, and leaves the record as it was.
    const reader = await VerifiedRecord.read(root);
    expect(reader.inodesStable).toBe(false);
    expect(JSON.parse(await readFile(record, 'utf8')).stable).toBe(true);
    const again = await VerifiedRecord.open(root);
    expect(again.inodesStable).toBe(false);
    expect(again.matches(PATH, await lstat(file))).toBe(true);
    again.close();
    expect(JSON.parse(await readFile(record, 'utf8')).stable).toBe(false);
    // Another size or time is still another file.
    await writeFile(file, 'other bytes');
    expect((await VerifiedRecord.read(root)).matches(PATH, await lstat(file))).toBe(false);
  });

  it('takes a probe with another change time for a copy (a root moved to another disk) and measures again', async () => {
    (await VerifiedRecord.open(root)).close();
    const probe = join(root, STATE_FOLDER, 'inode-probe');
    const stats = await lstat(probe);
    await writeFile(
      `${probe}.json`,
      JSON.stringify({ ino: stats.ino + 1, ctimeMs: stats.ctimeMs - 5_000, stable: true }),
    );
    expect((await VerifiedRecord.open(root)).inodesStable).toBe(true);
    expect(JSON.parse(await readFile(`${probe}.json`, 'utf8'))).toEqual({
      ino: stats.ino,
      ctimeMs: stats.ctimeMs,
      stable: true,
    });
  });
});
