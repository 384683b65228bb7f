/** `mission-data status`: the local data root compared with the archive. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { NAME_FILTER_OPTIONS, positiveInteger, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const status: CommandDeclaration = {
  name: 'status',
  client: true,
  examples: EXAMPLES.status,
  declare: (command, { run, io }) =>
    withOptions(
      command.description(
        'compare the local data root with the archive: missing, outdated, extra and changed files (exit 1 when any but extra)',
      ),
      NAME_FILTER_OPTIONS,
    )
      .addOption(
        withChoices(
          new Option('--output-format <format>', 'a line per file, or JSON'),
          ['text', 'json'],
          'output formats',
        ).default('text'),
      )
      .option('--strict', 'extra files count too: exit 1 unless the data root holds nothing else')
      .option(
        '--page-size <n>',
        'records asked per page of a service that pages',
        positiveInteger('--page-size', 10_000),
        10_000,
      )
      .action((options) => run(async () => (await import('../commands/status.js')).status(options, io))),
};
