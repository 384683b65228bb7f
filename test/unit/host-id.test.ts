/**
 * The host id: made once at random in the configuration folder, the same for every later run and for runs that
 * start at once, and the host name only where the folder cannot hold it.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfigFile } from '../../src/core/config.js';
import { configFolder, hostId, isThisHost } from '../../src/core/host-id.js';
import { cleanup, finished, ROOT, tempDir } from '../helpers/e2e.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let home: string;

beforeAll(async () => {
  home = await tempDir('mission-host-id-');
});

afterAll(async () => {
  await cleanup(home);
});

describe('the host id', () => {
  it('lives in the configuration folder, never beside a config file named by MISSION_DATA_CONFIG', () => {
    const env = { XDG_CONFIG_HOME: join(home, 'xdg'), HOME: home };
    expect(configFolder(env)).toBe(dirname(defaultConfigFile(env)));
    expect(configFolder({ ...env, MISSION_DATA_CONFIG: join(home, 'elsewhere', 'md.json') })).toBe(
      dirname(defaultConfigFile(env)),
    );
  });

  it('is made once, and read again by later runs', async () => {
    const folder = join(home, 'first', 'mission-data');
    const id = hostId(folder);
    expect(id).toMatch(UUID);
    expect((await readFile(join(folder, 'host-id'), 'utf8')).trim()).toBe(id);
    expect(readdirSync(folder)).toEqual(['host-id']);
    // Another folder, then this one again: read from the file, not remembered.
    expect(hostId(join(home, 'second'))).not.toBe(id);
    expect(hostId(folder)).toBe(id);
  });

  it('keeps an id already there, and replaces a damaged one', async () => {
    const kept = join(home, 'kept');
    await mkdir(kept, { recursive: true });
    await writeFile(join(kept, 'host-id'), 'c0ffee00-0000-4000-8000-00000000beef\n');
    expect(hostId(kept)).toBe('c0ffee00-0000-4000-8000-00000000beef');
    const damaged = join(home, 'damaged');
    await mkdir(damaged, { recursive: true });
    await writeFile(join(damaged, 'host-id'), '{"half a');
    const id = hostId(damaged);
    expect(id).toMatch(UUID);
    expect((await readFile(join(damaged, 'host-id'), 'utf8')).trim()).toBe(id);
  });

  it('is the host name where the configuration folder cannot hold it', async () => {
    const file = join(home, 'a-file');
    await writeFile(file, '');
    expect(hostId(join(file, 'mission-data'))).toBe(hostname());
  });

  it('is one id for runs that make it at once', { timeout: 60_000 }, async () => {
    const { build } = await import('esbuild');
    const script = join(home, 'print-host-id.mjs');
    await build({
      stdin: {
        contents:
          "import { hostId } from './src/core/host-id.ts';\nprocess.stdout.write(hostId(process.argv[2]));\n",
        resolveDir: ROOT,
        sourcefile: 'print-host-id.ts',
        loader: 'ts',
      },
      outfile: script,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'error',
    });
    const folder = join(home, 'at-once');
    const at = String(Date.now() + 1500);
    const runs = await Promise.all(
      Array.from({ length: 12 }, () =>
        finished(spawn(process.execPath, [script, folder, at], { stdio: ['ignore', 'pipe', 'pipe'] })),
      ),
    );
    const ids = new Set(runs.map((run) => run.stdout));
    expect(ids.size, runs.map((run) => run.stderr).join('')).toBe(1);
    expect([...ids][0]).toMatch(UUID);
    expect((await readFile(join(folder, 'host-id'), 'utf8')).trim()).toBe([...ids][0]);
    expect(readdirSync(folder)).toEqual(['host-id']);
  });

  it('counts this host by its id or, for what earlier versions wrote, its host name', () => {
    const folder = join(home, 'this-host');
    expect(isThisHost(hostId(folder), folder)).toBe(true);
    expect(isThisHost(hostname(), folder)).toBe(true);
    expect(isThisHost('another-machine-id-0001', folder)).toBe(false);
  });
});
