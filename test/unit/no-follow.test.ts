/**
 * Opening without following a link at the last segment: by the kernel's O_NOFOLLOW where the system has it, and
 * by a look before the open where it has not (Windows, played here with a flag of 0): a link is refused with
 * ELOOP either way, so nothing planted in a data root or a store is read or written through.
 */
import { closeSync, constants, readFileSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_FOLLOW, openNoFollow, openNoFollowSync } from '../../src/core/no-follow.js';
import { unixOnly } from '../helpers/platform.js';

const SYMLINKS = unixOnly('symlinks');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'no-follow-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(SYMLINKS.missing)(SYMLINKS.title('a link at the last segment'), () => {
  it.each([
    ['the system flag', NO_FOLLOW],
    ['a look before the open (a system without the flag)', 0],
  ])('is refused with ELOOP by %s, for reading and for appending', async (_how, noFollow) => {
    const target = join(dir, 'outside.txt');
    writeFileSync(target, 'secret');
    const link = join(dir, 'record.jsonl');
    symlinkSync(target, link);
    await expect(openNoFollow(link, constants.O_RDONLY, undefined, noFollow)).rejects.toMatchObject({
      code: 'ELOOP',
    });
    expect(() =>
      openNoFollowSync(link, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o644, noFollow),
    ).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(readFileSync(target, 'utf8')).toBe('secret');
  });
});

describe('a plain file', () => {
  it.each([NO_FOLLOW, 0])('is opened, and a missing one created where asked (flag %i)', async (noFollow) => {
    const file = join(dir, 'plain.txt');
    writeFileSync(file, 'bytes');
    const handle = await openNoFollow(file, constants.O_RDONLY, undefined, noFollow);
    expect(await handle.readFile({ encoding: 'utf8' })).toBe('bytes');
    await handle.close();
    const created = join(dir, 'new.txt');
    const fd = openNoFollowSync(created, constants.O_WRONLY | constants.O_CREAT, 0o644, noFollow);
    writeSync(fd, 'made');
    closeSync(fd);
    expect(readFileSync(created, 'utf8')).toBe('made');
    await expect(
      openNoFollow(join(dir, 'absent.txt'), constants.O_RDONLY, undefined, noFollow),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
