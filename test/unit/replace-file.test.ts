/**
 * `replaceFile` and `removeFile`: a rename or removal refused while another program holds the file open (Windows'
 * EPERM, EACCES, EBUSY) is tried again with a growing pause, then fails naming the file and what to do; the
 * real path falls back to the walking resolver where the native one fails (Windows RAM disks).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { realPath, realPathOps, realPathSync } from '../../src/core/real-path.js';
import {
  FileHeldOpenError,
  HELD_RETRY_TOTAL_MS,
  heldFileOps,
  removeFile,
  replaceFile,
  replaceFileSync,
} from '../../src/core/replace-file.js';

const refusal = (code: string) => Object.assign(new Error(`${code}: refused`), { code });

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'replace-file-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  await rm(folder, { recursive: true, force: true });
});

describe('replaceFile', () => {
  it('tries a replace refused with EBUSY or EPERM again, and succeeds once the other program lets go', async () => {
    const rename = vi.spyOn(heldFileOps, 'rename');
    rename.mockRejectedValueOnce(refusal('EBUSY')).mockRejectedValueOnce(refusal('EPERM'));
    await writeFile(join(folder, 'new'), 'new');
    await writeFile(join(folder, 'file'), 'old');
    await replaceFile(join(folder, 'new'), join(folder, 'file'));
    expect(rename).toHaveBeenCalledTimes(3);
    expect(await readFile(join(folder, 'file'), 'utf8')).toBe('new');
  });

  it('gives up after about 2.5 s with an error naming the file, its errno and what to do', async () => {
    vi.useFakeTimers();
    const rename = vi.spyOn(heldFileOps, 'rename').mockRejectedValue(refusal('EACCES'));
    const target = join(folder, 'file');
    const outcome = replaceFile(join(folder, 'new'), target).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(HELD_RETRY_TOTAL_MS - 1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = (await outcome) as FileHeldOpenError;
    expect(error).toBeInstanceOf(FileHeldOpenError);
    expect(error).toMatchObject({ path: target, errno: 'EACCES', code: 'E_LOCAL_FILE' });
    expect(error.message).toBe(
      `Cannot replace ${target}: the system refused it (EACCES) for 2.5 s; another program (a viewer, a Python session, an antivirus, the search indexer) may hold it open.`,
    );
    expect(error.hint).toBe(`Close the program that has ${target} open, then run the command again.`);
    // Pauses double from 20 ms to 400 ms: a dozen tries, not hundreds.
    expect(rename.mock.calls.length).toBeGreaterThan(5);
    expect(rename.mock.calls.length).toBeLessThan(15);
  });

  it('fails at once on any other error (a missing source is no program holding a file)', async () => {
    const rename = vi.spyOn(heldFileOps, 'rename');
    const error = await replaceFile(join(folder, 'missing'), join(folder, 'file')).catch((e: unknown) => e);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(rename).toHaveBeenCalledTimes(1);
  });

  it('in its synchronous form, waits on the thread and succeeds', async () => {
    const renameSync = vi.spyOn(heldFileOps, 'renameSync');
    renameSync.mockImplementationOnce(() => {
      throw refusal('EPERM');
    });
    await writeFile(join(folder, 'new'), 'new');
    const started = Date.now();
    replaceFileSync(join(folder, 'new'), join(folder, 'file'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(renameSync).toHaveBeenCalledTimes(2);
    expect(await readFile(join(folder, 'file'), 'utf8')).toBe('new');
  });
});

describe('removeFile', () => {
  it('tries a removal refused with EBUSY again; a missing file is no error', async () => {
    const remove = vi.spyOn(heldFileOps, 'rm').mockRejectedValueOnce(refusal('EBUSY'));
    await writeFile(join(folder, 'file'), 'x');
    await removeFile(join(folder, 'file'));
    expect(remove).toHaveBeenCalledTimes(2);
    await expect(readFile(join(folder, 'file'))).rejects.toMatchObject({ code: 'ENOENT' });
    await removeFile(join(folder, 'file'));
  });

  it('gives up on a file held open throughout, naming it', async () => {
    vi.useFakeTimers();
    vi.spyOn(heldFileOps, 'rm').mockRejectedValue(refusal('EPERM'));
    const outcome = removeFile(join(folder, 'file')).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(HELD_RETRY_TOTAL_MS);
    expect(((await outcome) as Error).message).toMatch(
      /^Cannot remove .*file: the system refused it \(EPERM\)/,
    );
  });
});

describe('realPath', () => {
  it('falls back to the walking resolver where the native one fails (a Windows RAM disk)', async () => {
    const real = await realPath(folder);
    const failing = Object.assign(new Error('EISDIR: illegal operation on a directory, realpath'), {
      code: 'EISDIR',
    });
    vi.spyOn(realPathOps, 'native').mockRejectedValue(failing);
    vi.spyOn(realPathOps, 'nativeSync').mockImplementation(() => {
      throw failing;
    });
    expect(await realPath(folder)).toBe(real);
    expect(realPathSync(folder)).toBe(real);
    // A path that neither resolves keeps the native error.
    await expect(realPath(join(folder, 'missing'))).rejects.toBe(failing);
  });
});
