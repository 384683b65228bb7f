/**
 * Settings through the built command line (issue 19): a key read from stdin, `~` in a data root from the config
 * file, an unknown setting in the file warned about instead of stopping every command.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanup, runCli, tempDir } from '../helpers/e2e.js';

let home: string;
let configFile: string;

beforeAll(() => assertBuilt());
beforeEach(async () => {
  home = await tempDir();
  configFile = join(home, 'config', 'mission-data', 'config.json');
});
afterEach(() => cleanup(home));

const run = (args: string[], input?: string) =>
  runCli(args, { cwd: home, timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

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
