/**
 * `client.sync` run after run: each run reports what changed in it only (a superseded version once, by the run
 * that finds it), and a held file deleted here is fetched again by a plain run, without asking for the whole
 * selection; a state written before superseded versions were kept still loads.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stateFolder } from '../../src/data-root/state-folder.js';
import { parseState, type SyncIdentity, syncId } from '../../src/data-root/sync-state.js';
import { API, magFile, SyncArchive } from '../helpers/sync-archive.js';

const MAG: SyncIdentity = { url: API, filters: { instrument: 'mag' }, allVersions: false };

let home: string;
let archive: SyncArchive;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-sync-runs-'));
  archive = new SyncArchive();
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const local = (path: string) => join(home, 'data', ...path.split('/'));
const stateFile = () => join(stateFolder(join(home, 'data')), `${syncId(MAG)}.json`);

describe('a superseded version', () => {
  it('is reported by the run that finds it superseded, and by no later run', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      archive.add(magFile('02'), '2025-02-01 10:00:00');
      expect((await client.sync({ instrument: 'mag' })).superseded).toEqual([]);
      archive.add(magFile('01', 'v01-01'), '2025-02-02 10:00:00');
      const found = await client.sync({ instrument: 'mag' });
      expect(found.fetched).toEqual([magFile('01', 'v01-01')]);
      expect(found.superseded).toEqual([magFile('01')]);
      expect(found.files.filter((file) => file.status === 'superseded').map((file) => file.path)).toEqual([
        magFile('01'),
      ]);
      for (const run of [1, 2]) {
        const later = await client.sync({ instrument: 'mag' });
        expect(later.superseded, `later run ${run}`).toEqual([]);
        expect(later.files, `later run ${run}`).toEqual([]);
      }
      // Still there, and still removed by a prune, which a dry run lists in full.
      const dry = await client.sync({ instrument: 'mag' }, { prune: true, dryRun: true });
      expect(dry.superseded).toEqual([magFile('01')]);
      const pruned = await client.sync({ instrument: 'mag' }, { prune: true });
      expect(pruned.pruned).toEqual([magFile('01')]);
    } finally {
      await client.close();
    }
  });

  it('is kept in the state, whose older form without it still loads', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' });
      archive.add(magFile('01', 'v01-01'), '2025-02-02 10:00:00');
      await client.sync({ instrument: 'mag' });
    } finally {
      await client.close();
    }
    const written = JSON.parse(await readFile(stateFile(), 'utf8'));
    expect(written.superseded).toEqual([magFile('01')]);
    const { superseded: _known, ...older } = written;
    const loaded = parseState(JSON.stringify(older), MAG, 'state.json');
    expect(loaded.first).toBe(false);
    expect(loaded.problem).toBeUndefined();
    expect(loaded.state.superseded).toEqual([]);
    expect(loaded.state.held).toEqual(written.held);
  });
});

describe('a held file deleted here', () => {
  it('is fetched again by a plain run, which still asks only for what is new', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      archive.add(magFile('02'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' });
      await rm(local(magFile('02')));
      const again = await client.sync({ instrument: 'mag' });
      expect(again).toMatchObject({ compared: 'new', fetched: [magFile('02')], inStep: true });
      expect(await readFile(local(magFile('02')), 'utf8')).toBe('file bytes');
      expect(archive.downloads()).toEqual([magFile('01'), magFile('02'), magFile('02')]);
      expect(archive.queries().at(-1)).toContain('ingestion_start_date=20250131');
      // Held and in place: the next run fetches nothing.
      expect((await client.sync({ instrument: 'mag' })).fetched).toEqual([]);
      expect(archive.downloads()).toHaveLength(3);
    } finally {
      await client.close();
    }
  });

  it('is not fetched again when a newer version is held, or fetched in its place', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      archive.add(magFile('02'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' });
      archive.add(magFile('01', 'v01-01'), '2025-02-02 10:00:00');
      await client.sync({ instrument: 'mag' });
      // The older version of day 1, superseded; day 2's, with a newer version just ingested.
      await rm(local(magFile('01')));
      await rm(local(magFile('02')));
      archive.add(magFile('02', 'v02-00'), '2025-02-03 10:00:00');
      const run = await client.sync({ instrument: 'mag' });
      expect(run.fetched).toEqual([magFile('02', 'v02-00')]);
      expect(archive.downloads().filter((path) => path === magFile('01') || path === magFile('02'))).toEqual([
        magFile('01'),
        magFile('02'),
      ]);
    } finally {
      await client.close();
    }
  });

  it('is fetched again with every version kept', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      archive.add(magFile('01', 'v01-01'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' }, { allVersions: true });
      await rm(local(magFile('01')));
      const run = await client.sync({ instrument: 'mag' }, { allVersions: true });
      expect(run.fetched).toEqual([magFile('01')]);
    } finally {
      await client.close();
    }
  });

  it('is said as a planned download by a dry run, which fetches nothing', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' });
      await rm(local(magFile('01')));
      const dry = await client.sync({ instrument: 'mag' }, { dryRun: true });
      expect(dry.files).toEqual([expect.objectContaining({ path: magFile('01'), status: 'would-download' })]);
      expect(archive.downloads()).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('is forgotten, in one notice, by a whole comparison that finds the archive no longer offers it', async () => {
    const client = archive.client(home);
    try {
      // Records without ingestion dates: every run compares the whole selection.
      archive.add(magFile('01'));
      archive.add(magFile('02'));
      await client.sync({ instrument: 'mag' });
      await rm(local(magFile('02')));
      archive.withdraw(magFile('02'));
      const notices: string[] = [];
      const run = await client.sync({ instrument: 'mag' }, { onNotice: (line) => notices.push(line) });
      expect(run).toMatchObject({ compared: 'whole', fetched: [], failed: [], inStep: true });
      expect(notices).toEqual(['1 held file deleted here, no longer in the archive: not fetched again.']);
      expect(Object.keys(JSON.parse(await readFile(stateFile(), 'utf8')).held)).toEqual([magFile('01')]);
      expect(archive.downloads()).toEqual([magFile('01'), magFile('02')]);
    } finally {
      await client.close();
    }
  });

  it('that cannot be fetched again fails the run and is asked for again by the next', async () => {
    const client = archive.client(home);
    try {
      archive.add(magFile('01'), '2025-02-01 10:00:00');
      await client.sync({ instrument: 'mag' });
      await rm(local(magFile('01')));
      // A file where the folder of the held file was: its look says the file is gone (ENOTDIR).
      await rm(join(local(magFile('01')), '..'), { recursive: true });
      await writeFile(join(local(magFile('01')), '..'), 'not a folder');
      const run = await client.sync({ instrument: 'mag' });
      expect(run.failed).toEqual([magFile('01')]);
      await rm(join(local(magFile('01')), '..'));
      const next = await client.sync({ instrument: 'mag' });
      expect(next).toMatchObject({ fetched: [magFile('01')], failed: [], inStep: true });
    } finally {
      await client.close();
    }
  });
});
