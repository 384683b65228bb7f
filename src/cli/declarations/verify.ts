/** `mission-data verify`: every held file hashed and compared with the checksum it was verified with. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { NAME_FILTER_OPTIONS, positiveInteger, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const verify: CommandDeclaration = {
  name: 'verify',
  client: true,
  examples: EXAMPLES.verify,
  declare: (command, { run, io }) =>
    withOptions(
      command.description(
        'hash every local file in scope and compare it with the checksum it was verified with, or the archive states (exit 1 when a file is corrupt)',
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
      .option(
        '--repair',
        'fetch each corrupt file again; its old bytes are replaced only once the new copy verifies',
      )
      .option(
        '--download',
        'a file with no record whose archive states no checksum (KMS, multipart) is fetched whole and compared byte for byte',
      )
      .option(
        '--not-verified-since <date>',
        'only files not verified since this date (YYYYMMDD or ISO 8601), so a nightly run can verify part of the root',
      )
      .option(
        '--strict',
        'unverifiable and unreadable files count too: exit 1 unless every file is ok or extra',
      )
      .option(
        '--threads <n>',
        'files hashed at once, each on a thread of its own (default: 2, or 1 on a single core)',
        positiveInteger('--threads', 64),
      )
      .option(
        '--page-size <n>',
        'records asked per page of a service that pages',
        positiveInteger('--page-size', 10_000),
        10_000,
      )
      .action((options) => run(async () => (await import('../commands/verify.js')).verify(options, io))),
};
