/**
 * Configuration: the only reader of `process.env` and of the configuration file. Each setting resolves
 * flag > environment > configuration file > default, and remembers where its value came from.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';
import type { ConfigDocument, ConfigFile } from './config-file.js';
import { readConfigText } from './config-text.js';
import { ConfigError } from './errors.js';
import { LOCAL_PATHS, type PathRules, withForwardSlashes } from './platform-paths.js';
import { type ProxySettings, resolveProxy } from './proxy.js';
import { displayName, SETTING_KEYS, SETTINGS, type SettingSpec, settingDefault } from './settings.js';
import { parseHttpUrl } from './urls.js';

/** The development server of the service, used when nothing else is configured. */
export const DEFAULT_URL = settingDefault('url');

/** A setting's name (as the library and the configuration file write it). */
export type SettingName = (typeof SETTINGS)[number]['key'];
export const SETTING_NAMES: readonly SettingName[] = SETTING_KEYS;

/** Where a setting's value came from. */
export type SettingSource = 'flag' | `environment (${string})` | 'config file' | 'default' | 'unset';

/** A setting's value and its origin. */
export interface ResolvedSetting {
  value: string | undefined;
  source: SettingSource;
}

/**
 * The resolved configuration: the value of each setting, typed and in the unit the table gives it (`timeout` in
 * seconds, `partSize` in MiB; `url` without a trailing slash, `dataDir` absolute), and where each came from.
 * Written with the table's own types (no alias of this module), so that the package's declarations name it whole.
 */
export type Config = {
  -readonly [Entry in (typeof SETTINGS)[number] as Entry['key']]: Entry extends { default: string }
    ? ReturnType<Entry['parse']>
    : ReturnType<Entry['parse']> | undefined;
} & {
  /** Where each value came from. */
  sources: Record<(typeof SETTINGS)[number]['key'], SettingSource>;
  /** The configuration file that was (or would be) read. */
  configFile: string;
  /** The proxy settings of the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`). */
  proxy: ProxySettings;
  /** What in the configuration was ignored (an unknown setting in the file), for the caller to show. */
  warnings: string[];
};

/** The values of the settings alone. */
type SettingValues = Omit<Config, 'sources' | 'configFile' | 'proxy' | 'warnings'>;

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
export const SETTING_DISPLAY_NAMES = Object.fromEntries(
  SETTINGS.map((spec) => [spec.key, displayName(spec)]),
) as Record<SettingName, string>;

/** Names a user may type for each setting (`config get api-key` and `config get apiKey` alike). */
export const SETTING_ALIASES: Record<string, SettingName> = Object.fromEntries(
  SETTINGS.flatMap((spec) => [
    [displayName(spec), spec.key],
    [spec.key, spec.key],
  ]),
);

/** The default configuration file: `config.json` in the platform's configuration folder. */
export function defaultConfigFile(env: Record<string, string | undefined> = process.env): string {
  const explicit = env.MISSION_DATA_CONFIG;
  if (explicit) return resolve(explicit);
  // XDG_CONFIG_HOME, when set, is honoured on every system, as gh and git do (env-paths reads it on Linux only):
  // one variable moves the configuration of a test, a container or a portable setup anywhere.
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg) {
    return join(resolve(xdg), 'mission-data', 'config.json');
  }
  return join(envPaths('mission-data', { suffix: '' }).config, 'config.json');
}

/**
 * A path with a leading `~` (alone or before a slash, or a backslash under Windows' rules: `~\data`) read as the
 * home folder, as a shell would have: values of the configuration file and the environment reach the program
 * unexpanded.
 */
export function expandHome(
  path: string,
  env: Record<string, string | undefined> = process.env,
  rules: PathRules = LOCAL_PATHS,
): string {
  if (path !== '~' && !withForwardSlashes(path, rules).startsWith('~/')) return path;
  return rules.join(env.HOME || homedir(), path.slice(1));
}

/**
 * The configuration file's reader and writer, loaded with the first command that reads the configuration: its
 * checks are zod schemas, built as it loads, which a program that imports the library and never reads a
 * configuration need not build.
 */
const configFiles = () => import('./config-file.js');

/** What a configuration file that is not there holds. */
const NO_FILE: ConfigDocument = { settings: {}, unknown: {} };

/** Checks one value as the configuration file would hold it; throws a `ConfigError` when it is bad. */
export async function checkSetting(name: SettingName, value: string): Promise<string> {
  const { settingProblem } = await configFiles();
  const problem = settingProblem(name, value);
  if (problem !== undefined) {
    throw new ConfigError(`Invalid ${SETTING_DISPLAY_NAMES[name]} ${JSON.stringify(value)}: ${problem}.`);
  }
  return value;
}

/** Resolves one setting from flag, environment, file and default. */
function resolveSetting(
  spec: SettingSpec,
  flags: ConfigFlags,
  env: Record<string, string | undefined>,
  file: ConfigFile,
): ResolvedSetting {
  const name = spec.key as SettingName;
  const flag = flags[name];
  if (flag === '') {
    // An empty flag is a mistake (an unset shell variable, say); falling through to another source would hide it.
    throw new ConfigError(`--${SETTING_DISPLAY_NAMES[name]} must not be empty.`, {
      hint: 'Leave it out to use the environment, the config file or the default.',
    });
  }
  if (flag !== undefined) return { value: flag, source: 'flag' };
  for (const variable of spec.env) {
    const value = env[variable];
    if (value !== undefined && value !== '') return { value, source: `environment (${variable})` };
  }
  if (file[name] !== undefined) return { value: file[name], source: 'config file' };
  return spec.default === undefined
    ? { value: undefined, source: 'unset' }
    : { value: spec.default, source: 'default' };
}

/**
 * A setting's value, checked where a flag or the environment gave it (the file's values were checked on
 * reading, the defaults are right) and parsed.
 */
function settingValue(spec: SettingSpec, setting: ResolvedSetting, configFile: string): unknown {
  if (setting.value === undefined) return undefined;
  if (setting.source === 'flag' || setting.source.startsWith('environment')) {
    const origin = `set by ${describeSource(spec.key as SettingName, setting.source, configFile)}`;
    if (spec.problem === 'http-url') {
      const problem = httpUrlProblem(setting.value, origin);
      if (problem) throw new ConfigError(problem.message, { hint: problem.hint });
    } else if (spec.checkGiven) {
      const problem = spec.problem(setting.value);
      if (problem !== undefined) {
        const shown = `${SETTING_DISPLAY_NAMES[spec.key as SettingName]} ${JSON.stringify(setting.value)}`;
        throw new ConfigError(`Invalid ${shown}, ${origin}: ${problem}.`);
      }
    }
  }
  return spec.parse(setting.value);
}

/** Resolves the whole configuration: every setting of the table, each from flag, environment, file or default. */
export async function loadConfig(flags: ConfigFlags = {}, options: LoadConfigOptions = {}): Promise<Config> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const configFile = options.configFile ?? defaultConfigFile(env);
  // Without a configuration file (most runs), its checks are not loaded.
  const text = await readConfigText(configFile);
  const checks = text === undefined ? undefined : await configFiles();
  const { settings: file, unknown } =
    checks && text !== undefined ? checks.parseConfigDocument(configFile, text) : NO_FILE;
  const values: Record<string, unknown> = {};
  const sources: Record<string, SettingSource> = {};
  for (const spec of SETTINGS) {
    const setting = resolveSetting(spec, flags, env, file);
    values[spec.key] = settingValue(spec, setting, configFile);
    sources[spec.key] = setting.source;
  }
  values.dataDir = resolve(cwd, expandHome(values.dataDir as string, env));
  return {
    ...(values as SettingValues),
    sources: sources as Record<SettingName, SettingSource>,
    configFile,
    proxy: resolveProxy(env),
    warnings: checks?.unknownSettingsWarning(configFile, unknown) ?? [],
  };
}

/** What is wrong with the service address `value` given by `origin`, with a hint; undefined when it is right. */
function httpUrlProblem(value: string, origin: string): { message: string; hint: string } | undefined {
  const hint = 'Give an address such as https://api.dev.imap-mission.com.';
  const parsed = parseHttpUrl(value);
  if (parsed === 'not a URL') {
    return { message: `Invalid service URL ${JSON.stringify(value)}, ${origin}: it is not a URL.`, hint };
  }
  if (parsed === 'not http(s)') {
    return {
      message: `Invalid service URL ${JSON.stringify(value)}, ${origin}: only http:// and https:// are supported.`,
      hint,
    };
  }
  return undefined;
}

/** Says where a setting's value came from, in words that fit after "from" or "set by". */
export function describeSource(name: SettingName, source: SettingSource, configFile: string): string {
  if (source === 'flag') return `the --${SETTING_DISPLAY_NAMES[name]} flag`;
  if (source === 'config file') return `the configuration file ${configFile}`;
  if (source === 'default' || source === 'unset') return 'the default';
  return `the ${source.slice('environment ('.length, -1)} environment variable`;
}

/** Shows an API key with all but its last four characters hidden. */
export function maskApiKey(key: string): string {
  return key.length <= 4 ? '****' : `****${key.slice(-4)}`;
}

/** Removes a setting from the configuration file; returns whether it was set. */
export async function unsetConfigValue(file: string, name: SettingName): Promise<boolean> {
  const { readConfigDocument, writeConfigFile } = await configFiles();
  const { settings, unknown } = await readConfigDocument(file);
  if (settings[name] === undefined) return false;
  delete settings[name];
  await writeConfigFile(file, { ...unknown, ...settings });
  return true;
}

/** Stores a setting in the configuration file after checking it. */
export async function setConfigValue(file: string, name: SettingName, value: string): Promise<void> {
  const { readConfigDocument, writeConfigFile } = await configFiles();
  const { settings, unknown } = await readConfigDocument(file);
  settings[name] = await checkSetting(name, value);
  // Keys this version does not know are kept: they may be a newer version's settings.
  await writeConfigFile(file, { ...unknown, ...settings });
}
