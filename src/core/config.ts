/**
 * Configuration: the only reader of `process.env` and of the configuration file. Each setting resolves
 * flag > environment > configuration file > default, and remembers where its value came from.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';
import {
  type ConfigFile,
  readConfigDocument,
  settingProblem,
  unknownSettingsWarning,
  writeConfigFile,
} from './config-file.js';
import { ConfigError } from './errors.js';
import { type ProxySettings, resolveProxy } from './proxy.js';
import { parseHttpUrl } from './urls.js';

/** The development server of the service, used when nothing else is configured. */
export const DEFAULT_URL = 'https://api.dev.imap-mission.com';

/** Environment variables of each setting, first found wins. */
export const ENVIRONMENT_VARIABLES = {
  url: ['MISSION_DATA_ACCESS_URL', 'IMAP_DATA_ACCESS_URL'],
  apiKey: ['MISSION_API_KEY', 'IMAP_API_KEY'],
  dataDir: ['MISSION_DATA_DIR', 'IMAP_DATA_DIR'],
  token: ['MISSION_ACCESS_TOKEN', 'IMAP_ACCESS_TOKEN'],
  retries: ['MISSION_DATA_RETRIES'],
  timeout: ['MISSION_DATA_TIMEOUT'],
} as const;

/** Retries of a failed request when none is configured (4 attempts in all). */
export const DEFAULT_RETRIES = 3;
/** Seconds a transfer may go without a byte before it counts as stalled, when none is configured. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

export type SettingName = keyof typeof ENVIRONMENT_VARIABLES;
export const SETTING_NAMES = Object.keys(ENVIRONMENT_VARIABLES) as SettingName[];

/** Where a setting's value came from. */
export type SettingSource = 'flag' | `environment (${string})` | 'config file' | 'default' | 'unset';

/** A setting's value and its origin. */
export interface ResolvedSetting {
  value: string | undefined;
  source: SettingSource;
}

/** The resolved configuration. */
export interface Config {
  url: string;
  apiKey: string | undefined;
  /** Absolute path of the local data root. */
  dataDir: string;
  /** Bearer token for the service's `/authorized/` routes. */
  token: string | undefined;
  /** Retries of a failed request (with backoff), 0 to 20. */
  retries: number;
  /** Seconds without a byte (or without an answer) before a request counts as stalled. */
  timeout: number;
  /** Where each value came from. */
  sources: Record<SettingName, SettingSource>;
  /** The configuration file that was (or would be) read. */
  configFile: string;
  /** The proxy settings of the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`). */
  proxy: ProxySettings;
  /** What in the configuration was ignored (an unknown setting in the file), for the caller to show. */
  warnings: string[];
}

/** Values given on the command line (or by a library caller). */
export type ConfigFlags = Partial<Record<SettingName, string | undefined>>;

export interface LoadConfigOptions {
  /** Environment to read instead of `process.env`. */
  env?: Record<string, string | undefined>;
  /** Configuration file to read instead of the default one. */
  configFile?: string;
  /** Folder that relative data roots resolve against; defaults to the working directory. */
  cwd?: string;
}

/** The name users type and read for each setting: the flag without its dashes. */
export const SETTING_DISPLAY_NAMES: Record<SettingName, string> = {
  url: 'url',
  apiKey: 'api-key',
  dataDir: 'data-dir',
  token: 'token',
  retries: 'retries',
  timeout: 'timeout',
};

/** Names a user may type for each setting (`config get api-key` and `config get apiKey` alike). */
export const SETTING_ALIASES: Record<string, SettingName> = {
  url: 'url',
  'api-key': 'apiKey',
  apiKey: 'apiKey',
  'data-dir': 'dataDir',
  dataDir: 'dataDir',
  token: 'token',
  retries: 'retries',
  timeout: 'timeout',
};

/** The default configuration file: `config.json` in the platform's configuration folder. */
export function defaultConfigFile(env: Record<string, string | undefined> = process.env): string {
  const explicit = env.MISSION_DATA_CONFIG;
  if (explicit) return resolve(explicit);
  // env-paths reads XDG_CONFIG_HOME from process.env; honour an injected environment the same way.
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && process.platform !== 'darwin' && process.platform !== 'win32') {
    return join(resolve(xdg), 'mission-data', 'config.json');
  }
  return join(envPaths('mission-data', { suffix: '' }).config, 'config.json');
}

/**
 * A path with a leading `~` (alone or before a slash) read as the home folder, as a shell would have: values of
 * the configuration file and the environment reach the program unexpanded.
 */
export function expandHome(path: string, env: Record<string, string | undefined> = process.env): string {
  if (path !== '~' && !path.startsWith('~/')) return path;
  return join(env.HOME || homedir(), path.slice(1));
}

/** Checks one value as the configuration file would hold it; throws a `ConfigError` when it is bad. */
export function checkSetting(name: SettingName, value: string): string {
  const problem = settingProblem(name, value);
  if (problem !== undefined) {
    throw new ConfigError(`Invalid ${SETTING_DISPLAY_NAMES[name]} ${JSON.stringify(value)}: ${problem}.`);
  }
  return value;
}

/** Resolves one setting from flag, environment, file and default. */
function resolveSetting(
  name: SettingName,
  flags: ConfigFlags,
  env: Record<string, string | undefined>,
  file: ConfigFile,
  fallback: string | undefined,
): ResolvedSetting {
  const flag = flags[name];
  if (flag === '') {
    // An empty flag is a mistake (an unset shell variable, say); falling through to another source would hide it.
    throw new ConfigError(`--${SETTING_DISPLAY_NAMES[name]} must not be empty.`, {
      hint: 'Leave it out to use the environment, the config file or the default.',
    });
  }
  if (flag !== undefined) return { value: flag, source: 'flag' };
  for (const variable of ENVIRONMENT_VARIABLES[name]) {
    const value = env[variable];
    if (value !== undefined && value !== '') return { value, source: `environment (${variable})` };
  }
  if (file[name] !== undefined) return { value: file[name], source: 'config file' };
  return fallback === undefined
    ? { value: undefined, source: 'unset' }
    : { value: fallback, source: 'default' };
}

/** Resolves the whole configuration. */
export async function loadConfig(flags: ConfigFlags = {}, options: LoadConfigOptions = {}): Promise<Config> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const configFile = options.configFile ?? defaultConfigFile(env);
  const { settings: file, unknown } = await readConfigDocument(configFile);
  const url = resolveSetting('url', flags, env, file, DEFAULT_URL);
  const apiKey = resolveSetting('apiKey', flags, env, file, undefined);
  const dataDir = resolveSetting('dataDir', flags, env, file, 'data');
  const token = resolveSetting('token', flags, env, file, undefined);
  const retries = resolveSetting('retries', flags, env, file, String(DEFAULT_RETRIES));
  const timeout = resolveSetting('timeout', flags, env, file, String(DEFAULT_TIMEOUT_SECONDS));
  const checkedUrl = checkUrl(url.value ?? DEFAULT_URL, url.source, configFile);
  return {
    url: checkedUrl,
    apiKey: apiKey.value,
    dataDir: resolve(cwd, expandHome(dataDir.value ?? 'data', env)),
    token: token.value,
    retries: Number(checkNumber('retries', retries, configFile)),
    timeout: Number(checkNumber('timeout', timeout, configFile)),
    sources: {
      url: url.source,
      apiKey: apiKey.source,
      dataDir: dataDir.source,
      token: token.source,
      retries: retries.source,
      timeout: timeout.source,
    },
    configFile,
    proxy: resolveProxy(env),
    warnings: unknownSettingsWarning(configFile, unknown),
  };
}

/** Says where a setting's value came from, in words that fit after "from" or "set by". */
export function describeSource(name: SettingName, source: SettingSource, configFile: string): string {
  if (source === 'flag') return `the --${SETTING_DISPLAY_NAMES[name]} flag`;
  if (source === 'config file') return `the configuration file ${configFile}`;
  if (source === 'default' || source === 'unset') return 'the default';
  return `the ${source.slice('environment ('.length, -1)} environment variable`;
}

/** A numeric setting's value, checked wherever it came from (a file's value was checked on reading). */
function checkNumber(name: 'retries' | 'timeout', setting: ResolvedSetting, configFile: string): string {
  const value = setting.value ?? '';
  const problem = settingProblem(name, value);
  if (problem === undefined) return value;
  throw new ConfigError(
    `Invalid ${name} ${JSON.stringify(value)}, set by ${describeSource(name, setting.source, configFile)}: ${problem}.`,
  );
}

function checkUrl(value: string, source: SettingSource, configFile: string): string {
  const origin = `set by ${describeSource('url', source, configFile)}`;
  const hint = 'Give an address such as https://api.dev.imap-mission.com.';
  const parsed = parseHttpUrl(value);
  if (parsed === 'not a URL') {
    throw new ConfigError(`Invalid service URL ${JSON.stringify(value)}, ${origin}: it is not a URL.`, {
      hint,
    });
  }
  if (parsed === 'not http(s)') {
    throw new ConfigError(
      `Invalid service URL ${JSON.stringify(value)}, ${origin}: only http:// and https:// are supported.`,
      { hint },
    );
  }
  return value.replace(/\/+$/, '');
}

/** Shows an API key with all but its last four characters hidden. */
export function maskApiKey(key: string): string {
  return key.length <= 4 ? '****' : `****${key.slice(-4)}`;
}

/** Removes a setting from the configuration file; returns whether it was set. */
export async function unsetConfigValue(file: string, name: SettingName): Promise<boolean> {
  const { settings, unknown } = await readConfigDocument(file);
  if (settings[name] === undefined) return false;
  delete settings[name];
  await writeConfigFile(file, { ...unknown, ...settings });
  return true;
}

/** Stores a setting in the configuration file after checking it. */
export async function setConfigValue(file: string, name: SettingName, value: string): Promise<void> {
  const { settings, unknown } = await readConfigDocument(file);
  settings[name] = checkSetting(name, value);
  // Keys this version does not know are kept: they may be a newer version's settings.
  await writeConfigFile(file, { ...unknown, ...settings });
}
