/** `mission-data coverage`: the days the archive holds for each product, and what is here. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { FILTER_OPTIONS, positiveInteger, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const coverage: CommandDeclaration = {
  name: 'coverage',
  client: true,
  examples: EXAMPLES.coverage,
  declare: (command, { run, io }) =>
    withOptions(
      command.description(
        'which days the archive holds for each product, its gaps and what is here: a calendar, JSON or CSV',
      ),
      FILTER_OPTIONS,
    )
      .addOption(
        withChoices(
          new Option('--output-format <format>', 'a calendar, or one record per product and day'),
          ['calendar', 'json', 'csv'],
          'output formats',
        ).default('calendar'),
      )
      .option('--html <file>', 'also write a self-contained web page with a calendar per product')
      .option(
        '--page-size <n>',
        'records asked per page of a service that pages',
        positiveInteger('--page-size', 10_000),
        10_000,
      )
      .addHelpText(
        'after',
        '\nCalendar marks: # in the archive, @ here (latest version), ^ here (older than\n' +
          'the archive), . no file.',
      )
      .action((options) => run(async () => (await import('../commands/coverage.js')).coverage(options, io))),
};
