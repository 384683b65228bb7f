/** `mission-data config` and its subcommands: show and change the settings. */

import { ExitCode } from '../../core/errors.js';
import { EXAMPLES } from '../examples.js';
import type { GlobalOptions } from '../io.js';
import { settingNames } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

/** The settings a `<key>` names: those of the table of settings. */
const KEYS = settingNames(' or ');

const list: CommandDeclaration = {
  name: 'list',
  client: true,
  examples: EXAMPLES.list,
  declare: (command, { run, io }) =>
    command
      .description('show every setting, its value and where it comes from')
      .action((options: GlobalOptions) =>
        run(async () => {
          await (await import('../commands/config.js')).configList(options, io);
          return ExitCode.Success;
        }),
      ),
};

const get: CommandDeclaration = {
  name: 'get',
  client: true,
  examples: EXAMPLES.get,
  declare: (command, { run, io }) =>
    command
      .description('print one setting (exit 1 when unset)')
      .argument('<key>', KEYS)
      .action((key: string, options: GlobalOptions) =>
        run(async () => (await import('../commands/config.js')).configGet(key, options, io)),
      ),
};

const set: CommandDeclaration = {
  name: 'set',
  client: true,
  examples: EXAMPLES.set,
  declare: (command, { run, io }) =>
    command
      .description('store a setting in the config file')
      .argument('<key>', KEYS)
      .argument('<value>', 'the value; - reads it from stdin (keeps a key out of the shell history)')
      .action((key: string, value: string, options: GlobalOptions) =>
        run(async () => {
          await (await import('../commands/config.js')).configSet(key, value, options, io);
          return ExitCode.Success;
        }),
      ),
};

const unset: CommandDeclaration = {
  name: 'unset',
  client: true,
  examples: EXAMPLES.unset,
  declare: (command, { run, io }) =>
    command
      .description('remove a setting from the config file')
      .argument('<key>', KEYS)
      .action((key: string, options: GlobalOptions) =>
        run(async () => {
          await (await import('../commands/config.js')).configUnset(key, options, io);
          return ExitCode.Success;
        }),
      ),
};

export const config: CommandDeclaration = {
  name: 'config',
  client: false,
  examples: EXAMPLES.config,
  declare: (command) =>
    command
      .description(`show and change settings (${settingNames(', ')})`)
      .addHelpText(
        'after',
        '\nSettings resolve as: flag > environment > config file > default.\nThe config file is config.json in the configuration folder\n(`mission-data config list` shows it).',
      ),
  subcommands: [list, get, set, unset],
};
