/** `mission-data query`: find files by their metadata. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { FILTER_OPTIONS, OUTPUT_FORMATS, positiveInteger, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const query: CommandDeclaration = {
  name: 'query',
  client: true,
  examples: EXAMPLES.query,
  declare: (command, { run, io }) =>
    withOptions(
      command.description('find files by their metadata; prints a table, JSON or CSV'),
      FILTER_OPTIONS,
    )
      .addOption(
        withChoices(
          new Option('--output-format <format>', 'how to print the results'),
          OUTPUT_FORMATS,
          'output formats',
        ).default('table'),
      )
      .option(
        '--page-size <n>',
        'records asked per page of a service that pages',
        positiveInteger('--page-size', 10_000),
        10_000,
      )
      .action((options) => run(async () => (await import('../commands/query.js')).query(options, io))),
};
