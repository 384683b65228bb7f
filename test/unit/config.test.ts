import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkSetting,
  DEFAULT_URL,
  defaultConfigFile,
  describeSource,
  loadConfig,
  maskApiKey,
  setConfigValue,
  unsetConfigValue,
} from '../../src/core/config.js';
import { readConfigFile } from '../../src/core/config-file.js';
import { ConfigError } from '../../src/core/errors.js';
import { unixOnly } from '../helpers/platform.js';

const MODES = unixOnly('file modes');

let folder: string;
let configFile: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'mission-config-'));
  configFile = join(folder, 'config.json');
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('loadConfig', () => {
  it('uses the defaults when nothing is set', async () => {
    const config = await loadConfig({}, { env: {}, configFile, cwd: '/work/here' });
    expect(config).toMatchObject({
      url: DEFAULT_URL,
      apiKey: undefined,
      dataDir: '/work/here/data',
      sources: { url: 'default', apiKey: 'unset', dataDir: 'default' },
    });
  });

  it('resolves flag > MISSION_* > IMAP_* > config file > default for each setting', async () => {
    await writeFile(
      configFile,
      JSON.stringify({ url: 'http://file.example', apiKey: 'file-key', dataDir: '/file' }),
    );
    const full = {
      MISSION_DATA_ACCESS_URL: 'http://mission.example',
      IMAP_DATA_ACCESS_URL: 'http://imap.example',
      MISSION_API_KEY: 'mission-key',
      IMAP_API_KEY: 'imap-key',
      MISSION_DATA_DIR: '/mission',
      IMAP_DATA_DIR: '/imap',
    };
    const flags = { url: 'http://flag.example', apiKey: 'flag-key', dataDir: '/flag' };
    expect(await loadConfig(flags, { env: full, configFile })).toMatchObject({
      ...flags,
      sources: { url: 'flag' },
    });
    expect(await loadConfig({}, { env: full, configFile })).toMatchObject({
      url: 'http://mission.example',
      apiKey: 'mission-key',
      dataDir: '/mission',
      sources: { url: 'environment (MISSION_DATA_ACCESS_URL)', dataDir: 'environment (MISSION_DATA_DIR)' },
    });
    const imapOnly = {
      IMAP_DATA_ACCESS_URL: 'http://imap.example',
      IMAP_API_KEY: 'imap-key',
      IMAP_DATA_DIR: '/imap',
    };
    expect(await loadConfig({}, { env: imapOnly, configFile })).toMatchObject({
      url: 'http://imap.example',
      apiKey: 'imap-key',
      dataDir: '/imap',
      sources: { apiKey: 'environment (IMAP_API_KEY)' },
    });
    expect(await loadConfig({}, { env: {}, configFile })).toMatchObject({
      url: 'http://file.example',
      apiKey: 'file-key',
      dataDir: '/file',
      sources: { url: 'config file', apiKey: 'config file', dataDir: 'config file' },
    });
  });

  it.each([
    [
      'the --data-dir flag',
      { dataDir: '/flag' },
      { MISSION_DATA_DIR: '/mission', IMAP_DATA_DIR: '/imap' },
      '/flag',
      'flag',
    ],
    [
      'MISSION_DATA_DIR',
      {},
      { MISSION_DATA_DIR: '/mission', IMAP_DATA_DIR: '/imap' },
      '/mission',
      'environment (MISSION_DATA_DIR)',
    ],
    ['IMAP_DATA_DIR', {}, { IMAP_DATA_DIR: '/imap' }, '/imap', 'environment (IMAP_DATA_DIR)'],
    ['the config file', {}, {}, '/file', 'config file'],
  ])(
    'takes the data root from %s when nothing above it is set',
    async (_layer, flags, env, dataDir, source) => {
      await writeFile(configFile, JSON.stringify({ dataDir: '/file' }));
      const config = await loadConfig(flags, { env, configFile, cwd: '/cwd' });
      expect(config.dataDir).toBe(dataDir);
      expect(config.sources.dataDir).toBe(source);
    },
  );

  it('falls back to <cwd>/data, and treats empty environment variables as unset', async () => {
    const config = await loadConfig(
      {},
      { env: { MISSION_DATA_DIR: '', IMAP_DATA_DIR: '' }, configFile, cwd: '/cwd' },
    );
    expect(config.dataDir).toBe('/cwd/data');
    expect(config.sources.dataDir).toBe('default');
  });

  it.each([
    ['url', '--url'],
    ['apiKey', '--api-key'],
    ['dataDir', '--data-dir'],
  ] as const)('refuses an empty %s flag instead of silently using another source', async (name, flag) => {
    const attempt = loadConfig({ [name]: '' }, { env: { MISSION_DATA_DIR: '/env' }, configFile });
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(`${flag} must not be empty.`);
  });

  it('resolves a relative data root against the working directory and trims a trailing slash of the URL', async () => {
    const config = await loadConfig(
      { url: 'http://127.0.0.1:9/' },
      { env: { MISSION_DATA_DIR: 'rel/root' }, configFile, cwd: '/base' },
    );
    expect(config.dataDir).toBe('/base/rel/root');
    expect(config.url).toBe('http://127.0.0.1:9');
  });

  it('rejects a URL that is not http or https, naming where it came from', async () => {
    await expect(loadConfig({}, { env: { MISSION_DATA_ACCESS_URL: 'ftp://x' }, configFile })).rejects.toThrow(
      'Invalid service URL "ftp://x", set by the MISSION_DATA_ACCESS_URL environment variable: only http:// and https:// are supported.',
    );
    await expect(loadConfig({ url: 'not a url' }, { env: {}, configFile })).rejects.toThrow(
      'Invalid service URL "not a url", set by the --url flag: it is not a URL.',
    );
  });

  it('describes each source in words', () => {
    expect(describeSource('apiKey', 'flag', configFile)).toBe('the --api-key flag');
    expect(describeSource('url', 'environment (IMAP_DATA_ACCESS_URL)', configFile)).toBe(
      'the IMAP_DATA_ACCESS_URL environment variable',
    );
    expect(describeSource('dataDir', 'config file', configFile)).toBe(`the configuration file ${configFile}`);
    expect(describeSource('url', 'default', configFile)).toBe('the default');
  });
});

describe('the configuration file', () => {
  it.each([
    ['not JSON', '{"url": ', /is not valid JSON/],
    ['not an object', '[1, 2]', /is malformed: it must be a JSON object/],
    ['a bad URL', '{"url": "ftp://example"}', /is malformed: url must be an http/],
    ['a value of the wrong type', '{"apiKey": 42}', /is malformed: apiKey/],
    ['an empty value', '{"dataDir": ""}', /is malformed: dataDir must not be empty/],
    ['several problems', '{"url": "x", "apiKey": 1}', /is malformed: url must be an http.*; apiKey .*\.$/],
  ])('is a clear ConfigError naming the file when %s', async (_why, text, message) => {
    await writeFile(configFile, text);
    const error = await readConfigFile(configFile).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(configFile);
    expect((error as ConfigError).message).toMatch(message);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).code).toBe('E_CONFIG');
    expect((error as ConfigError).hint).toContain(configFile);
  });

  it('is a ConfigError naming the file when it cannot be read', async () => {
    const error = await readConfigFile(folder).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`Cannot read the configuration file ${folder}`);
  });

  it('checks a single value by the name users type', async () => {
    expect(await checkSetting('url', 'https://example.org')).toBe('https://example.org');
    await expect(checkSetting('apiKey', '')).rejects.toThrow('Invalid api-key "": must not be empty.');
    await expect(checkSetting('url', 'ftp://example.org')).rejects.toThrow('Invalid url "ftp://example.org"');
  });

  it.skipIf(MODES.missing)(
    MODES.title('is written by set and unset, readable by its owner only'),
    async () => {
      await setConfigValue(configFile, 'url', 'http://127.0.0.1:8080');
      await setConfigValue(configFile, 'apiKey', 'secret-key');
      expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({
        url: 'http://127.0.0.1:8080',
        apiKey: 'secret-key',
      });
      expect((await stat(configFile)).mode & 0o777).toBe(0o600);
      expect(await unsetConfigValue(configFile, 'url')).toBe(true);
      expect(await unsetConfigValue(configFile, 'url')).toBe(false);
      expect(await readConfigFile(configFile)).toEqual({ apiKey: 'secret-key' });
    },
  );

  it('refuses to store a bad value and leaves the file as it was', async () => {
    await setConfigValue(configFile, 'url', 'http://127.0.0.1:8080');
    await expect(setConfigValue(configFile, 'url', 'nonsense')).rejects.toThrow(ConfigError);
    expect(await readConfigFile(configFile)).toEqual({ url: 'http://127.0.0.1:8080' });
  });

  it('lives in MISSION_DATA_CONFIG, else under XDG_CONFIG_HOME', () => {
    expect(defaultConfigFile({ MISSION_DATA_CONFIG: '/etc/md.json' })).toBe('/etc/md.json');
    expect(defaultConfigFile({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/mission-data/config.json');
  });
});

describe('maskApiKey', () => {
  it('shows only the last four characters', () => {
    expect(maskApiKey('abcdefgh1234')).toBe('****1234');
    expect(maskApiKey('abc')).toBe('****');
  });
});

describe('everyday configuration (issue 19)', () => {
  it('warns about a setting it does not know instead of failing, and keeps it when the file is rewritten', async () => {
    await writeFile(configFile, '{"colour": "blue", "url": "http://127.0.0.1:8080"}');
    const config = await loadConfig({}, { configFile, env: {} });
    expect(config.url).toBe('http://127.0.0.1:8080');
    expect(config.warnings).toEqual([
      `The configuration file ${configFile} has an unknown setting "colour", ignored. Settings are url, apiKey, dataDir, token, retries, timeout, concurrency, connections, partSize, requireChecksum.`,
    ]);
    await setConfigValue(configFile, 'apiKey', 'secret-key');
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({
      colour: 'blue',
      url: 'http://127.0.0.1:8080',
      apiKey: 'secret-key',
    });
  });

  it('reads a leading ~ of the data root from the file or the environment as the home folder', async () => {
    await writeFile(configFile, '{"dataDir": "~/mission/data"}');
    const fromFile = await loadConfig({}, { configFile, env: { HOME: '/home/someone' }, cwd: '/work' });
    expect(fromFile.dataDir).toBe('/home/someone/mission/data');
    const fromEnv = await loadConfig(
      {},
      { configFile, env: { HOME: '/home/someone', MISSION_DATA_DIR: '~' }, cwd: '/work' },
    );
    expect(fromEnv.dataDir).toBe('/home/someone');
    const notHome = await loadConfig({ dataDir: '~other/data' }, { configFile, env: {}, cwd: '/work' });
    expect(notHome.dataDir).toBe('/work/~other/data');
  });
});

describe('the transfer settings (concurrency, connections, part size, the checksum requirement)', () => {
  it('default to 8 files, auto connections, 16 MiB parts and no checksum required', async () => {
    const config = await loadConfig({}, { env: {}, configFile });
    expect(config).toMatchObject({
      concurrency: 8,
      connections: 'auto',
      partSize: 16,
      requireChecksum: false,
    });
    expect(config.sources).toMatchObject({
      concurrency: 'default',
      connections: 'default',
      partSize: 'default',
      requireChecksum: 'default',
    });
  });

  it('resolve flag > environment > config file > default, typed', async () => {
    await writeFile(
      configFile,
      JSON.stringify({ concurrency: '3', connections: '4', partSize: '32', requireChecksum: 'true' }),
    );
    const fromFile = await loadConfig({}, { env: {}, configFile });
    expect(fromFile).toMatchObject({ concurrency: 3, connections: 4, partSize: 32, requireChecksum: true });
    expect(fromFile.sources.partSize).toBe('config file');

    const env = {
      MISSION_DATA_CONCURRENCY: '5',
      MISSION_DATA_CONNECTIONS: 'auto',
      MISSION_DATA_PART_SIZE: '64',
      MISSION_DATA_REQUIRE_CHECKSUM: 'false',
    };
    const fromEnv = await loadConfig({}, { env, configFile });
    expect(fromEnv).toMatchObject({
      concurrency: 5,
      connections: 'auto',
      partSize: 64,
      requireChecksum: false,
    });
    expect(fromEnv.sources.requireChecksum).toBe('environment (MISSION_DATA_REQUIRE_CHECKSUM)');

    const fromFlag = await loadConfig({ concurrency: '7', connections: '2' }, { env, configFile });
    expect(fromFlag).toMatchObject({ concurrency: 7, connections: 2, partSize: 64 });
    expect(fromFlag.sources.concurrency).toBe('flag');
  });

  it('refuse a bad value from the environment, naming the variable, in the words of the flag check', async () => {
    const refused = async (variable: string, value: string) =>
      (await loadConfig({}, { env: { [variable]: value }, configFile }).catch(
        (error: unknown) => error,
      )) as Error;
    expect(await refused('MISSION_DATA_CONCURRENCY', '0')).toMatchObject({
      code: 'E_CONFIG',
      message:
        'Invalid concurrency "0", set by the MISSION_DATA_CONCURRENCY environment variable: must be a whole number from 1 to 64.',
    });
    expect((await refused('MISSION_DATA_CONNECTIONS', 'many')).message).toBe(
      'Invalid connections "many", set by the MISSION_DATA_CONNECTIONS environment variable: must be a whole number from 1 to 64, or auto (measured).',
    );
    expect((await refused('MISSION_DATA_PART_SIZE', '2048')).message).toBe(
      'Invalid part-size "2048", set by the MISSION_DATA_PART_SIZE environment variable: must be a whole number from 1 to 1024.',
    );
    expect((await refused('MISSION_DATA_REQUIRE_CHECKSUM', 'yes')).message).toBe(
      'Invalid require-checksum "yes", set by the MISSION_DATA_REQUIRE_CHECKSUM environment variable: must be true or false.',
    );
  });

  it('refuse a bad value in the config file, naming the file, and in config set', async () => {
    await writeFile(configFile, JSON.stringify({ partSize: '0', requireChecksum: 'on' }));
    const error = (await loadConfig({}, { env: {}, configFile }).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      `The configuration file ${configFile} is malformed: partSize must be a whole number from 1 to 1024; requireChecksum must be true or false.`,
    );
    await expect(checkSetting('connections', '65')).rejects.toThrow(
      'Invalid connections "65": must be a whole number from 1 to 64, or auto (measured).',
    );
    await writeFile(configFile, '{}');
    await setConfigValue(configFile, 'concurrency', '12');
    expect(await readConfigFile(configFile)).toMatchObject({ concurrency: '12' });
  });
});
