/** `mission-data config list|get|set|unset`: shows and edits the configuration file. */
import { resolve } from 'node:path';
import {
  type Config,
  checkSetting,
  defaultConfigFile,
  expandHome,
  loadConfig,
  maskApiKey,
  SETTING_ALIASES,
  SETTING_DISPLAY_NAMES,
  SETTING_NAMES,
  type SettingName,
  setConfigValue,
  unsetConfigValue,
} from '../../core/config.js';
import { UsageError } from '../../core/errors.js';
import { settingSpec } from '../../core/settings.js';
import type { CommandIO, GlobalOptions } from '../io.js';

/** Maps a typed setting name (`api-key`, `apiKey`) to the setting, or throws a usage error listing the valid ones. */
export function settingName(key: string): SettingName {
  const name = Object.hasOwn(SETTING_ALIASES, key) ? SETTING_ALIASES[key] : undefined;
  if (!name) {
    throw new UsageError(
      `Unknown setting ${JSON.stringify(key)}. Settings are: ${SETTING_NAMES.map((n) => SETTING_DISPLAY_NAMES[n]).join(', ')}.`,
    );
  }
  return name;
}

/** Settings shown masked: they authorize requests. */
function isSecret(name: SettingName): boolean {
  return settingSpec(name).secret === true;
}

function display(config: Config, name: SettingName): string {
  const value = config[name];
  if (value === undefined) return '(not set)';
  return isSecret(name) ? maskApiKey(String(value)) : String(value);
}

/** The configuration, with what it ignores told on stderr (unless quiet). */
async function loadShown(options: GlobalOptions, io: CommandIO): Promise<Config> {
  const config = await loadConfig(options);
  if (!options.quiet) for (const warning of config.warnings) io.stderr.write(`Warning: ${warning}\n`);
  return config;
}

/** Prints every setting, its value (the API key and token masked) and where it came from. */
export async function configList(options: GlobalOptions, io: CommandIO): Promise<void> {
  const config = await loadShown(options, io);
  const rows = [
    ['setting', 'value', 'source'],
    ...SETTING_NAMES.map((name) => [
      SETTING_DISPLAY_NAMES[name],
      display(config, name),
      config.sources[name],
    ]),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  for (const [setting = '', value = '', source = ''] of rows) {
    io.stdout.write(`${setting.padEnd(widths[0] ?? 0)}  ${value.padEnd(widths[1] ?? 0)}  ${source}\n`);
  }
  io.stdout.write(`\nconfig file: ${config.configFile}\n`);
}

/** Prints one setting's value (the API key and token unmasked, for scripts). */
export async function configGet(key: string, options: GlobalOptions, io: CommandIO): Promise<number> {
  const name = settingName(key);
  const config = await loadShown(options, io);
  const value = config[name];
  if (value === undefined) return 1;
  io.stdout.write(`${value}\n`);
  return 0;
}

/**
 * Stores one setting in the configuration file. The value `-` is read from stdin (its first line), so a key
 * need not appear in the shell's history or the process list: `mission-data config set api-key - < key.txt`.
 */
export async function configSet(
  key: string,
  given: string,
  options: GlobalOptions,
  io: CommandIO,
): Promise<void> {
  const name = settingName(key);
  const value = given === '-' ? await firstLine(io, SETTING_DISPLAY_NAMES[name]) : given;
  await checkSetting(name, value);
  // A relative data root would otherwise move with whichever folder the next command runs in.
  const stored = name === 'dataDir' ? resolve(expandHome(value)) : value;
  const configFile = defaultConfigFile();
  await setConfigValue(configFile, name, stored);
  if (!options.quiet) {
    const shown = isSecret(name) ? maskApiKey(stored) : stored;
    io.stderr.write(`Set ${SETTING_DISPLAY_NAMES[name]} to ${shown} in ${configFile}\n`);
  }
}

/** Removes one setting from the configuration file. */
export async function configUnset(key: string, options: GlobalOptions, io: CommandIO): Promise<void> {
  const name = settingName(key);
  const configFile = defaultConfigFile();
  const removed = await unsetConfigValue(configFile, name);
  if (options.quiet) return;
  io.stderr.write(
    removed
      ? `Removed ${SETTING_DISPLAY_NAMES[name]} from ${configFile}\n`
      : `${SETTING_DISPLAY_NAMES[name]} was not set in ${configFile}\n`,
  );
}

/** The first line of stdin, without its line end; on a terminal, a prompt on stderr first. */
async function firstLine(io: CommandIO, setting: string): Promise<string> {
  if (io.stdin.isTTY) io.stderr.write(`Type or paste the ${setting}, then press Enter: `);
  let text = '';
  for await (const chunk of io.stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.includes('\n')) break;
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') {
    throw new UsageError(`No ${setting} on stdin: \`config set ${setting} -\` reads the value from stdin.`, {
      hint: `For example: mission-data config set ${setting} - < file-holding-the-value`,
    });
  }
  return line;
}
