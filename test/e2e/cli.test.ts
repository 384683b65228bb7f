import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/mission-data.js');
const packageVersion = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string })
  .version;

let home: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built command line with a clean environment and its own configuration folder. */
function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...env },
      },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first');
});
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-cli-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('help and version', () => {
  it('--version prints the package version', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${packageVersion}\n`, stderr: '' });
  });

  it('--help lists every command and the environment variables', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    for (const word of [
      'query',
      'download',
      'upload',
      'serve',
      'config',
      'MISSION_DATA_DIR',
      'MISSION_DATA_ACCESS_URL',
    ]) {
      expect(result.stdout).toContain(word);
    }
  });

  it.each(['query', 'download', 'upload', 'serve', 'config'])('%s -h prints its help', async (command) => {
    const result = await run([command, '-h']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: mission-data ${command}`);
  });

  it('an unknown command or option is a usage error (exit 2)', async () => {
    const command = await run(['qeury']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'qeury'");
    expect(command.stderr).toContain('query');
    const option = await run(['config', 'list', '--colour']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("unknown option '--colour'");
  });
});

describe('config', () => {
  it('list shows each value and where it came from, the API key masked', async () => {
    const result = await run(['config', 'list'], {
      MISSION_API_KEY: 'key-abcdef-9876',
      IMAP_DATA_DIR: '/imap-data',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^url\s+https:\/\/api\.dev\.imap-mission\.com\s+\(default\)$/m);
    expect(result.stdout).toMatch(/^api-key\s+\*\*\*\*9876\s+\(environment \(MISSION_API_KEY\)\)$/m);
    expect(result.stdout).toMatch(/^data-dir\s+\/imap-data\s+\(environment \(IMAP_DATA_DIR\)\)$/m);
    expect(result.stdout).not.toContain('key-abcdef');
    expect(result.stdout).toContain(join(home, 'config', 'mission-data', 'config.json'));
  });

  it('set, get and unset round-trip through the config file', async () => {
    expect((await run(['config', 'set', 'url', 'http://127.0.0.1:8080'])).code).toBe(0);
    expect((await run(['config', 'set', 'data-dir', '/archive'])).code).toBe(0);
    expect(await run(['config', 'get', 'url'])).toMatchObject({ code: 0, stdout: 'http://127.0.0.1:8080\n' });
    const list = await run(['config', 'list']);
    expect(list.stdout).toMatch(/^url\s+http:\/\/127\.0\.0\.1:8080\s+\(config file\)$/m);
    expect(list.stdout).toMatch(/^data-dir\s+\/archive\s+\(config file\)$/m);
    const overridden = await run(['config', 'get', 'url', '--url', 'http://flag:1']);
    expect(overridden.stdout).toBe('http://flag:1\n');
    expect((await run(['config', 'unset', 'url'])).code).toBe(0);
    expect((await run(['config', 'get', 'url'])).stdout).toBe('https://api.dev.imap-mission.com\n');
    expect((await run(['config', 'get', 'api-key'])).code).toBe(1);
  });

  it('rejects unknown settings and bad values with exit 2 and leaves the file alone', async () => {
    const unknown = await run(['config', 'set', 'colour', 'blue']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown setting "colour". Settings are: url, api-key, data-dir.');
    const bad = await run(['config', 'set', 'url', 'ftp://example']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid url "ftp://example"');
    expect(existsSync(join(home, 'config', 'mission-data', 'config.json'))).toBe(false);
  });

  it('a malformed config file is a clear error naming the file, with no stack trace', async () => {
    const file = join(home, 'config', 'mission-data', 'config.json');
    await run(['config', 'set', 'url', 'http://127.0.0.1:1']);
    await writeFile(file, '{"url": "http://x", }');
    const result = await run(['config', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Error: The configuration file ${file} is not valid JSON`);
    expect(result.stderr).toContain('Hint: ');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const debug = await run(['config', 'list', '--debug']);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});
