/**
 * The names of a download's part files beside their destination, as every run reads and writes them, and whether
 * the run a part names still works on it.
 */
import { spawn } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hostId } from '../../src/core/host-id.js';
import { isPartName, partPath, partPidOf, recordPath } from '../../src/data-root/part-names.js';
import { STATE_FOLDER, stateFolder } from '../../src/data-root/state-folder.js';
import { ownerAlive, type PartRecord } from '../../src/download/part/part-leftovers.js';
import { cleanup, tempDir } from '../helpers/e2e.js';

const DESTINATION = join('/data', 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf');
const NAME = 'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';

describe('part names', () => {
  it('puts the part and its record beside the destination, named by the writing process', () => {
    expect(partPath(DESTINATION, 4242)).toBe(`${DESTINATION}.part.4242`);
    expect(recordPath(partPath(DESTINATION, 4242))).toBe(`${DESTINATION}.part.4242.json`);
  });

  it('tells parts and records from other names, and reads the pid of a part of one destination', () => {
    expect([`${NAME}.part.7`, `${NAME}.part.7.json`].every(isPartName)).toBe(true);
    expect([NAME, `${NAME}.part.7.json.tmp`, `${NAME}.part.x`, `${NAME}.partial`].some(isPartName)).toBe(
      false,
    );
    expect(partPidOf(DESTINATION, `${NAME}.part.7`)).toBe(7);
    expect(partPidOf(DESTINATION, `${NAME}.part.7.json`)).toBeUndefined();
    expect(partPidOf(DESTINATION, `other.cdf.part.7`)).toBeUndefined();
  });

  it('keeps the state in the hidden .mission-data folder of the root', () => {
    expect(STATE_FOLDER).toBe('.mission-data');
    expect(stateFolder('/data')).toBe(join('/data', '.mission-data'));
  });
});

describe("a part's owner", () => {
  let home: string;
  let live: ReturnType<typeof spawn>;

  beforeAll(async () => {
    home = await tempDir('mission-part-owner-');
    vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
    // A live process of this host that is no download run.
    live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' });
  });

  afterAll(async () => {
    live?.kill('SIGKILL');
    vi.unstubAllEnvs();
    await cleanup(home);
  });

  /** A part of process `pid` whose record names `host`, last written `ageMs` ago. */
  async function part(pid: number, host: string, ageMs = 0) {
    const folder = join(home, 'data');
    await mkdir(folder, { recursive: true });
    const path = partPath(join(folder, `${host}-${ageMs}.cdf`), pid);
    const record: PartRecord = { etag: '"e"', size: 10, pid, host };
    await writeFile(path, 'bytes');
    await writeFile(recordPath(path), JSON.stringify(record));
    const then = new Date(Date.now() - ageMs);
    await utimes(path, then, then);
    return { path, pid, record };
  }

  it('is gone when its record names this host, by id or by the host name earlier versions wrote, and no process has its pid', async () => {
    const dead = 2 ** 22 + 7;
    expect(await ownerAlive(await part(dead, hostId()))).toBe(false);
    expect(await ownerAlive(await part(dead, hostname()))).toBe(false);
  });

  it('works on it while it writes to it, whatever the host; a part untouched for a while is abandoned', async () => {
    const pid = live.pid as number;
    expect(await ownerAlive(await part(pid, hostId()))).toBe(true);
    expect(await ownerAlive(await part(4242, 'another-machine-id-0001'))).toBe(true);
    expect(await ownerAlive(await part(pid, hostId(), 2 * 60_000))).toBe(false);
    expect(await ownerAlive(await part(4242, 'another-machine-id-0001', 2 * 60_000))).toBe(false);
  });
});
