/**
 * A sync's listing of the data root (`LocalFiles`): it counts the held files it lists, and the held files it did
 * not list are the ones looked at (`findGoneHeld`), so a held file deleted here is found gone however many are
 * listed.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptyState } from '../../src/data-root/sync-state.js';
import { findGoneHeld } from '../../src/sync/gone.js';
import { LocalFiles } from '../../src/sync/local-files.js';
import { makeTempDir } from '../server/helpers.js';

const PATHS = [1, 2, 3].map(
  (day) => `imap/mag/l1a/2025/01/imap_mag_l1a_norm_2025010${day}_2025010${day}_v01-00.cdf`,
);
const FILTERS = { instrument: 'mag' };

let root: string;

beforeEach(async () => {
  root = await makeTempDir('mission-local-files-');
  for (const path of PATHS) {
    const local = join(root, ...path.split('/'));
    await mkdir(dirname(local), { recursive: true });
    await writeFile(local, 'bytes');
  }
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function stateHolding(paths: readonly string[]) {
  const state = emptyState({ url: 'http://api.test', filters: FILTERS, allVersions: false });
  for (const path of paths) state.held[path] = '2025-01-05 00:00:00';
  return state;
}

describe('LocalFiles', () => {
  it('counts the held files it lists', async () => {
    const gone = (PATHS[0] as string).replace('20250101_20250101', '20250109_20250109');
    const local = await LocalFiles.scan(root, FILTERS, stateHolding([PATHS[1] as string, gone]).held);
    expect(local.heldListed).toBe(1);
    expect(local.entries.size).toBe(3);
    expect((await LocalFiles.scan(root, FILTERS)).heldListed).toBe(0);
  });

  it('leaves every held file alone when all are listed, and finds one deleted here gone', async () => {
    const state = stateHolding(PATHS);
    const all = await LocalFiles.scan(root, FILTERS, state.held);
    expect(all.heldListed).toBe(3);
    expect(await findGoneHeld(state, all, false, undefined)).toEqual({ gone: [], withdrawn: [] });
    await rm(join(root, ...(PATHS[2] as string).split('/')));
    const after = await LocalFiles.scan(root, FILTERS, state.held);
    expect(after.heldListed).toBe(2);
    expect(await findGoneHeld(state, after, false, undefined)).toEqual({ gone: [PATHS[2]], withdrawn: [] });
  });
});
