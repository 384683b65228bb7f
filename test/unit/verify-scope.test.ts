/**
 * What a `verify` pass is about, from a listing of paths only: the same held files, extras, reasons and local paths
 * as the scan of the data root (`scanLocalCopy`) gives.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanLocalCopy } from '../../src/coverage/run.js';
import type { ReceivedRecord } from '../../src/service/records.js';
import { askScope, localPathOf } from '../../src/sync/verify-scope.js';

let root: string;
const folder = 'imap/mag/l1a/2024/01';
const held = [
  'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf',
  'imap_mag_l1a_norm_20240102_20240102_v01-00.cdf',
];
const notInArchive = 'imap_mag_l1a_norm_20240103_20240103_v01-00.cdf';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mission-verify-scope-'));
  await mkdir(join(root, folder), { recursive: true });
  for (const name of [...held, notInArchive, 'notes.txt']) await writeFile(join(root, folder, name), name);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the scope of a pass', () => {
  it('held files, and extras with the reasons and local paths the scan gives', async () => {
    const records = held.map((name) => ({ file_path: `${folder}/${name}` }) as ReceivedRecord);
    const http = {
      async *queryPages() {
        yield records.slice(0, 1);
        yield records.slice(1);
      },
    };
    const filters = { instrument: 'mag' };
    const scope = await askScope(http as never, {}, filters, { dataDir: root }).scope;
    expect(scope.held).toEqual(held.map((name) => `${folder}/${name}`));
    const scanned = await scanLocalCopy(root, filters);
    const expected = scanned
      .filter((entry) => !entry.file || !scope.held.includes(entry.path))
      .map((entry) => ({
        status: 'extra',
        path: entry.path,
        localPath: entry.localPath,
        reason: entry.file ? 'not in the archive' : entry.problem,
      }));
    expect(expected.map((entry) => entry.path)).toEqual(
      [notInArchive, 'notes.txt'].map((name) => `${folder}/${name}`),
    );
    expect(scope.extras).toEqual(expected);
  });

  it.each(['/', '.', 'data', 'data/', './a/../data//x/', '/tmp/root/'])(
    'a local path below %j is the one join makes',
    (base) => {
      const path = `${folder}/${held[0]}`;
      expect(localPathOf(base)(path)).toBe(join(base, ...path.split('/')));
    },
  );
});
