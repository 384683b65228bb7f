import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SETTING_DISPLAY_NAMES } from '../../src/core/config.js';

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
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
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

  it.each(['query', 'download', 'upload', 'serve', 'config', 'completion'])(
    '%s -h prints its help with examples of it',
    async (command) => {
      const result = await run([command, '-h']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: mission-data ${command}`);
      const examples = result.stdout.slice(result.stdout.indexOf('\nExamples:\n'));
      expect(examples).not.toBe(result.stdout);
      const lines = examples.split('\n').filter((line) => line.includes(`mission-data ${command}`));
      expect(lines.length).toBeGreaterThanOrEqual(2);
    },
  );

  it('shows an option only on the commands it acts on', async () => {
    // query writes no file: the data root means nothing to it.
    expect((await run(['query', '-h'])).stdout).not.toContain('--data-dir');
    for (const command of [['download'], ['upload'], ['config', 'list']]) {
      expect((await run([...command, '-h'])).stdout).toContain('--data-dir');
    }
    const query = await run(['query', '--data-dir', 'x', '--instrument', 'mag']);
    expect(query.code).toBe(2);
    expect(query.stderr).toBe(
      'Error: Unknown option --data-dir for query.\nHint: See mission-data query --help for the options and arguments it takes.\n',
    );
  });

  it('--help names the proxy variables', async () => {
    const result = await run(['--help']);
    for (const word of ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']) expect(result.stdout).toContain(word);
  });

  it('--help names the config file variable and the IMAP_* fallbacks', async () => {
    const result = await run(['--help']);
    for (const word of ['MISSION_DATA_CONFIG', 'IMAP_DATA_DIR', 'IMAP_DATA_ACCESS_URL', 'MISSION_API_KEY']) {
      expect(result.stdout).toContain(word);
    }
    expect(result.stderr).toBe('');
  });

  it('config --help lists the subcommands and the precedence of settings', async () => {
    const result = await run(['config', '--help']);
    expect(result.code).toBe(0);
    for (const line of [
      'list ',
      'get [options] <key>',
      'set [options] <key> <value>',
      'unset [options] <key>',
    ]) {
      expect(result.stdout).toContain(line);
    }
    expect(result.stdout).toContain('flag > environment > config file > default');
  });

  it('every help fits 80 columns, and config set --help names every setting', async () => {
    const commands = [
      [],
      ['query'],
      ['download'],
      ['upload'],
      ['sync'],
      ['status'],
      ['coverage'],
      ['serve'],
      ['completion'],
      ['config'],
      ['config', 'list'],
      ['config', 'get'],
      ['config', 'set'],
      ['config', 'unset'],
    ];
    for (const command of commands) {
      const help = await run([...command, '--help']);
      for (const line of help.stdout.split('\n')) {
        expect(line.length, `${command.join(' ')} --help: ${line}`).toBeLessThanOrEqual(80);
      }
    }
    const set = await run(['config', 'set', '--help']);
    for (const name of Object.values(SETTING_DISPLAY_NAMES)) expect(set.stdout).toContain(name);
  });

  it('says a bad --connections may be auto, and a repeated filter once', async () => {
    const connections = await run(['download', '--connections', 'abc', '--instrument', 'mag']);
    expect(connections.code).toBe(2);
    expect(connections.stderr.split('\n')[0]).toBe(
      "Error: --connections must be a whole number from 1 to 64, or auto (measured); got 'abc'.",
    );
    const repeated = await run(['query', '--instrument', 'mag', '--instrument', 'swe']);
    expect(repeated.code).toBe(2);
    expect(repeated.stderr.split('\n')[0]).toBe(
      'Error: --instrument is given twice (mag, then swe): a filter takes one value; run one query per value.',
    );
  });

  it('without a command, prints help on stderr and exits 2', async () => {
    const result = await run([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: mission-data');
  });

  it.each([
    [['config', 'get'], 'Error: Missing key for config get.\n'],
    [['config', 'set', 'url'], 'Error: Missing value for config set.\n'],
    [['config', 'list', 'extra'], "Error: Too many arguments for 'list'"],
    [
      ['config', 'lst'],
      'Error: Unknown command lst.\nHint: Did you mean list? See mission-data config --help.',
    ],
    [['config', 'list', '--url'], 'Error: --url needs a value (--url <url>).\n'],
    [
      ['query', '--output-format', 'xml'],
      "Error: Invalid --output-format 'xml'. Choose from table, json, csv.\n",
    ],
    [['query', '--output-format', 'jsno'], 'Choose from table, json, csv. Did you mean json?'],
    [['query', '--output-format', 'CSV'], 'Output formats are written in lower case: did you mean csv?'],
    [['query', '--table', 'ancilary', '--instrument', 'mag'], 'Did you mean ancillary?'],
    [['completion', 'bsh'], 'Allowed choices are bash, zsh, fish'],
    [
      ['download', '--concurrency', '0'],
      "Error: --concurrency must be a whole number from 1 to 64; got '0'.\n",
    ],
  ])('%j is a usage error (exit 2) saying what is wrong', async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    // In the tool's style: `Error: …` then a `Hint:` line, never commander's `error: …`.
    expect(result.stderr).toMatch(/^Error: [^\n]+\nHint: [^\n]+\n$/);
  });

  it('a bad file name is a validation error (exit 2) listing every broken rule in order, stack only with --debug', async () => {
    const name = 'mars_foo_l9_norm_20241340_2024011_v1.txt';
    const result = await run(['download', name, '--url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(2);
    const order = [
      'Invalid mission.',
      'Invalid instrument.',
      'Invalid data level.',
      'Invalid start date',
      'Invalid end date',
      'Invalid version',
      'Invalid extension.',
    ];
    const positions = order.map((message) => result.stderr.indexOf(message));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const debug = await run(['download', name, '--url', 'http://127.0.0.1:9', '--debug']);
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/ValidationError: [\s\S]*\n\s+at /);
  });

  it('stops quietly when the reader of its output goes away', async () => {
    const child = spawn(process.execPath, [bin, 'config', 'list'], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('an unknown command or option is a usage error (exit 2)', async () => {
    const command = await run(['qeury']);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe(
      'Error: Unknown command qeury.\nHint: Did you mean query? See mission-data --help.\n',
    );
    const option = await run(['config', 'list', '--colour']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^Error: Unknown option --colour for config list\.\nHint: /);
  });
});

describe('config', () => {
  it('list shows each value and where it came from, the API key masked', async () => {
    const result = await run(['config', 'list'], {
      MISSION_API_KEY: 'key-abcdef-9876',
      IMAP_DATA_DIR: '/imap-data',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^setting\s+value\s+source$/m);
    expect(result.stdout).toMatch(/^url\s+https:\/\/api\.dev\.imap-mission\.com\s+default$/m);
    expect(result.stdout).toMatch(/^api-key\s+\*\*\*\*9876\s+environment \(MISSION_API_KEY\)$/m);
    expect(result.stdout).toMatch(/^data-dir\s+\/imap-data\s+environment \(IMAP_DATA_DIR\)$/m);
    expect(result.stdout).not.toContain('key-abcdef');
    expect(result.stdout).toContain(join(home, 'config', 'mission-data', 'config.json'));
  });

  it('set, get and unset round-trip through the config file', async () => {
    expect((await run(['config', 'set', 'url', 'http://127.0.0.1:8080'])).code).toBe(0);
    expect((await run(['config', 'set', 'data-dir', '/archive'])).code).toBe(0);
    expect(await run(['config', 'get', 'url'])).toMatchObject({ code: 0, stdout: 'http://127.0.0.1:8080\n' });
    const list = await run(['config', 'list']);
    expect(list.stdout).toMatch(/^url\s+http:\/\/127\.0\.0\.1:8080\s+config file$/m);
    expect(list.stdout).toMatch(/^data-dir\s+\/archive\s+config file$/m);
    const overridden = await run(['config', 'get', 'url', '--url', 'http://flag:1']);
    expect(overridden.stdout).toBe('http://flag:1\n');
    expect((await run(['config', 'unset', 'url'])).code).toBe(0);
    expect((await run(['config', 'get', 'url'])).stdout).toBe('https://api.dev.imap-mission.com\n');
    expect((await run(['config', 'get', 'api-key'])).code).toBe(1);
  });

  it('rejects unknown settings and bad values with exit 2 and leaves the file alone', async () => {
    const unknown = await run(['config', 'set', 'colour', 'blue']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'Unknown setting "colour". Settings are: url, api-key, data-dir, token, retries, timeout, concurrency, connections, part-size, require-checksum.',
    );
    const bad = await run(['config', 'set', 'url', 'ftp://example']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid url "ftp://example"');
    const empty = await run(['config', 'set', 'api-key', '']);
    expect(empty).toMatchObject({ code: 2, stderr: 'Error: Invalid api-key "": must not be empty.\n' });
    const inherited = await run(['config', 'get', 'constructor']);
    expect(inherited.code).toBe(2);
    expect(inherited.stderr).toContain('Unknown setting "constructor"');
    expect(existsSync(join(home, 'config', 'mission-data', 'config.json'))).toBe(false);
  });

  it('set reports what it stored, the API key masked, and stays quiet with --quiet', async () => {
    const file = join(home, 'config', 'mission-data', 'config.json');
    const key = await run(['config', 'set', 'api-key', 'secret-abcd-1234']);
    expect(key).toMatchObject({ code: 0, stdout: '', stderr: `Set api-key to ****1234 in ${file}\n` });
    expect(await run(['config', 'set', 'url', 'http://127.0.0.1:1', '--quiet'])).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    expect(await run(['config', 'unset', 'url', '-q'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await run(['config', 'unset', 'url'])).stderr).toBe(`url was not set in ${file}\n`);
  });

  it('stores a relative data root as an absolute one, so it does not move with the working directory', async () => {
    expect((await run(['config', 'set', 'data-dir', 'archive/data'])).code).toBe(0);
    const file = JSON.parse(await readFile(join(home, 'config', 'mission-data', 'config.json'), 'utf8'));
    expect(file).toEqual({ dataDir: join(home, 'archive/data') });
  });

  it('takes the data root from --data-dir, MISSION_DATA_DIR, IMAP_DATA_DIR, the config file, then <cwd>/data', async () => {
    const both = { MISSION_DATA_DIR: '/mission', IMAP_DATA_DIR: '/imap' };
    expect((await run(['config', 'get', 'data-dir'])).stdout).toBe(`${join(home, 'data')}\n`);
    expect((await run(['config', 'set', 'data-dir', '/from-file'])).code).toBe(0);
    expect((await run(['config', 'get', 'data-dir'])).stdout).toBe('/from-file\n');
    expect((await run(['config', 'get', 'data-dir'], { IMAP_DATA_DIR: '/imap' })).stdout).toBe('/imap\n');
    expect((await run(['config', 'get', 'data-dir'], both)).stdout).toBe('/mission\n');
    expect((await run(['config', 'get', 'data-dir', '--data-dir', 'flag-root'], both)).stdout).toBe(
      `${join(home, 'flag-root')}\n`,
    );
  });

  it('refuses an empty flag and a bad service URL from the environment, saying where it came from', async () => {
    const empty = await run(['config', 'list', '--data-dir', ''], { MISSION_DATA_DIR: '/env' });
    expect(empty).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'Error: --data-dir must not be empty.\nHint: Leave it out to use the environment, the config file or the default.\n',
    });
    const url = await run(['config', 'list'], { MISSION_DATA_ACCESS_URL: 'not a url' });
    expect(url.code).toBe(2);
    expect(url.stderr).toBe(
      'Error: Invalid service URL "not a url", set by the MISSION_DATA_ACCESS_URL environment variable: it is not a URL.\n' +
        'Hint: Give an address such as https://api.dev.imap-mission.com.\n',
    );
  });

  it('a malformed config file is a clear error naming the file, with no stack trace', async () => {
    const file = join(home, 'config', 'mission-data', 'config.json');
    await run(['config', 'set', 'url', 'http://127.0.0.1:1']);
    await writeFile(file, '{"url": "http://x", }');
    const result = await run(['config', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Error: The configuration file ${file} is not valid JSON`);
    expect(result.stderr).toContain(`Hint: Fix the JSON in ${file}, or delete the file to start again.`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    for (const command of [
      ['config', 'get', 'url'],
      ['config', 'set', 'url', 'http://127.0.0.1:2'],
    ]) {
      const again = await run(command);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain(file);
      expect(again.stderr).not.toMatch(/\n\s+at /);
    }
    await writeFile(file, '{"apiKey": 42}');
    const malformed = await run(['config', 'list']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain(`Error: The configuration file ${file} is malformed: apiKey`);
    const debug = await run(['config', 'list', '--debug']);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe('values: did you mean, case and calendar', () => {
  it.each([
    [['--instrument', 'magg'], 'Invalid instrument. Please choose from ultra-45,', 'Did you mean mag?'],
    [
      ['--instrument', 'MAG'],
      'Invalid instrument.',
      'Instruments are written in lower case: did you mean mag?',
    ],
    [['--instrument', 'mag', '--data-level', 'L1B'], 'Invalid data level.', 'did you mean l1b?'],
    [
      ['--instrument', 'mag', '--start-date', '20250230'],
      'Invalid start_date "20250230"',
      '20250230 is not a date of the calendar (February has 28 days in 2025).',
    ],
  ])('query %j is a usage error that suggests what was meant', async (args, message, suggestion) => {
    const result = await run(['query', '--url', 'http://127.0.0.1:9', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain(suggestion);
    expect(result.stderr).not.toContain('Please use YYYYMMDD format');
  });

  it('a name part inside a file name gets the suggestion as a hint', async () => {
    const result = await run([
      'download',
      '--url',
      'http://127.0.0.1:9',
      'imap_MAG_l1a_norm_20250230_20250301_v01-00.cdf',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid instrument. Please choose from');
    expect(result.stderr).toContain(
      'Hint: "MAG" is not an instrument. Instruments are written in lower case: did you mean mag? 20250230 is not a date of the calendar (February has 28 days in 2025).',
    );
  });
});
