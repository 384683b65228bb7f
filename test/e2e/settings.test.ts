/**
 * Settings through the built command line (issue 19): a key read from stdin, `~` in a data root from the config
 * file, an unknown setting in the file warned about instead of stopping every command; the transfer settings
 * taken from the environment and the config file.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../src/server/index.js';
import { assertBuilt, bytesFor, cleanup, putFile, runCli, scienceName, tempDir } from '../helpers/e2e.js';

let home: string;
let configFile: string;

beforeAll(() => assertBuilt());
beforeEach(async () => {
  home = await tempDir();
  configFile = join(home, 'config', 'mission-data', 'config.json');
});
afterEach(() => cleanup(home));

const run = (args: string[], input?: string, env: Record<string, string> = {}) =>
  runCli(args, { cwd: home, timeoutMs: 30_000, env, ...(input === undefined ? {} : { input }) });

describe('config set <key> -', () => {
  it('reads the value from the first line of stdin, so the key is never on the command line', async () => {
    const set = await run(['config', 'set', 'api-key', '-'], 'key-from-stdin-1234\nsecond line\n');
    expect(set.code).toBe(0);
    expect(set.stderr).toBe(`Set api-key to ****1234 in ${configFile}\n`);
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({ apiKey: 'key-from-stdin-1234' });
    expect((await run(['config', 'get', 'api-key'])).stdout).toBe('key-from-stdin-1234\n');
  });

  it('refuses an empty stdin with a usage error', async () => {
    const set = await run(['config', 'set', 'api-key', '-'], '');
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('No api-key on stdin');
  });
});

describe('the config file', () => {
  it('reads a data root starting with ~/ as below the home folder', async () => {
    await mkdir(join(home, 'config', 'mission-data'), { recursive: true });
    await writeFile(configFile, '{"dataDir": "~/mission/data"}');
    const got = await run(['config', 'get', 'data-dir']);
    expect(got.code).toBe(0);
    expect(got.stdout).toBe(`${join(home, 'mission', 'data')}\n`);
  });

  it('warns about a setting it does not know, on every command, and carries on', async () => {
    await mkdir(join(home, 'config', 'mission-data'), { recursive: true });
    await writeFile(configFile, '{"colour": "blue", "url": "http://127.0.0.1:9"}');
    const warning = `Warning: The configuration file ${configFile} has an unknown setting "colour", ignored.`;
    const list = await run(['config', 'list']);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(warning);
    const dry = await run(['upload', '--dry-run', 'imap_mag_l1a_norm_20250101_20250101_v01-00.cdf']);
    expect(dry.stderr).toContain(warning);
    expect(dry.stdout).toMatch(/^cannot upload /);
    const quiet = await run(['config', 'list', '-q']);
    expect(quiet.stderr).toBe('');
  });
});

describe('the transfer settings from the environment and the config file', () => {
  it('config list shows them with where each came from, after the others', async () => {
    await mkdir(join(home, 'config', 'mission-data'), { recursive: true });
    await writeFile(configFile, '{"partSize": "32", "requireChecksum": "true"}');
    const list = await run(['config', 'list'], undefined, {
      MISSION_DATA_CONCURRENCY: '4',
      MISSION_DATA_CONNECTIONS: '2',
    });
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout.split('\n').map((line) => line.trim().split(/\s{2,}/));
    expect(rows.slice(7, 11)).toEqual([
      ['concurrency', '4', 'environment (MISSION_DATA_CONCURRENCY)'],
      ['connections', '2', 'environment (MISSION_DATA_CONNECTIONS)'],
      ['part-size', '32', 'config file'],
      ['require-checksum', 'true', 'config file'],
    ]);
    expect(rows[6]?.[0]).toBe('timeout');
    expect((await run(['config', 'get', 'partSize'])).stdout).toBe('32\n');
  });

  it('refuses a bad value, naming the variable or the file that set it, with exit 2', async () => {
    const fromEnv = await run(['config', 'list'], undefined, { MISSION_DATA_PART_SIZE: '0' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(
      'Error: Invalid part-size "0", set by the MISSION_DATA_PART_SIZE environment variable: must be a whole number from 1 to 1024.',
    );
    await mkdir(join(home, 'config', 'mission-data'), { recursive: true });
    await writeFile(configFile, '{"connections": "99"}');
    const fromFile = await run(['config', 'list']);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(
      `Error: The configuration file ${configFile} is malformed: connections must be a whole number from 1 to 64, or auto (measured).`,
    );
    const set = await run(['config', 'set', 'require-checksum', 'yes']);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('Invalid require-checksum "yes": must be true or false.');
  });

  it('a checksum required by the environment or the file fails a download the store states none for', async () => {
    const store = await tempDir('mission-store-');
    const name = scienceName('mag', 1);
    await putFile(store, name, bytesFor(name, 1000));
    // Objects answer as under SSE-KMS: no checksum the client can check the bytes against.
    const server = await startReferenceServer({ store, port: 0, faults: { kms: true } });
    try {
      const download = (env: Record<string, string>) =>
        run(['download', name, '--url', server.url, '--data-dir', 'data'], undefined, env);
      const local = join(home, 'data', 'imap', 'mag', 'l1a', '2024', '01', name);

      const required = await download({ MISSION_DATA_REQUIRE_CHECKSUM: 'true' });
      expect(required.code, required.stderr).toBe(1);
      expect(required.stderr).toMatch(/checksum/i);
      expect(required.stderr).not.toMatch(/no such file/);
      expect(existsSync(local)).toBe(false);

      await mkdir(join(home, 'config', 'mission-data'), { recursive: true });
      await writeFile(configFile, '{"requireChecksum": "true"}');
      expect((await download({})).code).toBe(1);
      expect(existsSync(local)).toBe(false);

      // The environment wins over the file.
      const allowed = await download({ MISSION_DATA_REQUIRE_CHECKSUM: 'false' });
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(existsSync(local)).toBe(true);
    } finally {
      await server.close();
      await cleanup(store);
    }
  });

  it('a part size and connections from the environment split a download the defaults fetch whole', async () => {
    const store = await tempDir('mission-store-');
    const name = scienceName('swe', 2);
    await putFile(store, name, bytesFor(name, 3 * 1024 * 1024));
    const server = await startReferenceServer({ store, port: 0 });
    try {
      const download = (env: Record<string, string>) =>
        run(
          ['download', name, '--url', server.url, '--data-dir', 'data', '--force', '--debug'],
          undefined,
          env,
        );
      const parts = (stderr: string) => stderr.split('\n').filter((line) => / -> 206 /.test(line)).length;
      const whole = await download({});
      expect(whole.code, whole.stderr).toBe(0);
      expect(parts(whole.stderr)).toBe(0);
      const split = await download({ MISSION_DATA_PART_SIZE: '1', MISSION_DATA_CONNECTIONS: '2' });
      expect(split.code, split.stderr).toBe(0);
      expect(parts(split.stderr)).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
      await cleanup(store);
    }
  });
});
