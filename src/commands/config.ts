/** `mission-data config list|get|set|unset`: shows and edits the configuration file. */
import {
  type Config,
  checkSetting,
  defaultConfigFile,
  loadConfig,
  maskApiKey,
  SETTING_ALIASES,
  SETTING_NAMES,
  type SettingName,
  setConfigValue,
  unsetConfigValue,
} from '../config.js';
import { UsageError } from '../errors.js';
import type { CommandIO, GlobalOptions } from './io.js';

/** The name a user types for each setting. */
const DISPLAY_NAMES: Record<SettingName, string> = { url: 'url', apiKey: 'api-key', dataDir: 'data-dir' };

/** Maps a typed setting name (`api-key`, `apiKey`) to the setting, or throws a usage error listing the valid ones. */
export function settingName(key: string): SettingName {
  const name = SETTING_ALIASES[key];
  if (!name) {
    throw new UsageError(
      `Unknown setting ${JSON.stringify(key)}. Settings are: ${SETTING_NAMES.map((n) => DISPLAY_NAMES[n]).join(', ')}.`,
    );
  }
  return name;
}

function display(config: Config, name: SettingName): string {
  const value = config[name];
  if (value === undefined) return '(not set)';
  return name === 'apiKey' ? maskApiKey(value) : value;
}

/** Prints every setting, its value (the API key masked) and where it came from. */
export async function configList(options: GlobalOptions, io: CommandIO): Promise<void> {
  const config = await loadConfig(options);
  const width = Math.max(...SETTING_NAMES.map((name) => DISPLAY_NAMES[name].length));
  for (const name of SETTING_NAMES) {
    io.stdout.write(
      `${DISPLAY_NAMES[name].padEnd(width)}  ${display(config, name)}  (${config.sources[name]})\n`,
    );
  }
  io.stdout.write(`\nconfig file: ${config.configFile}\n`);
}

/** Prints one setting's value (the API key unmasked, for scripts). */
export async function configGet(key: string, options: GlobalOptions, io: CommandIO): Promise<number> {
  const name = settingName(key);
  const config = await loadConfig(options);
  const value = config[name];
  if (value === undefined) return 1;
  io.stdout.write(`${value}\n`);
  return 0;
}

/** Stores one setting in the configuration file. */
export async function configSet(
  key: string,
  value: string,
  _options: GlobalOptions,
  io: CommandIO,
): Promise<void> {
  const name = settingName(key);
  checkSetting(name, value);
  const configFile = defaultConfigFile();
  await setConfigValue(configFile, name, value);
  io.stderr.write(`Set ${DISPLAY_NAMES[name]} in ${configFile}\n`);
}

/** Removes one setting from the configuration file. */
export async function configUnset(key: string, _options: GlobalOptions, io: CommandIO): Promise<void> {
  const name = settingName(key);
  const configFile = defaultConfigFile();
  const removed = await unsetConfigValue(configFile, name);
  io.stderr.write(
    removed
      ? `Removed ${DISPLAY_NAMES[name]} from ${configFile}\n`
      : `${DISPLAY_NAMES[name]} was not set in ${configFile}\n`,
  );
}
