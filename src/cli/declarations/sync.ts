/** `mission-data sync`: keep the data root in step with the archive. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { duration, FILTER_OPTIONS, settingOptionsFor, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const sync: CommandDeclaration = {
  name: 'sync',
  client: true,
  examples: EXAMPLES.sync,
  declare: (command, { run, io }) => {
    command.description(
      'keep the data root in step with the archive: fetch what is new since the last run (stdout: paths fetched)',
    );
    withOptions(command, FILTER_OPTIONS)
      .option('--all-versions', 'keep every version of each product (default: only the newest)')
      .option('--full', 'also fetch again held files edited here, comparing the whole selection')
      .option(
        '--prune',
        'remove older versions a newer held version supersedes (only files this tool verified)',
      )
      .option('--dry-run', 'say what would be fetched and removed; fetch and remove nothing')
      .option(
        '--watch <duration>',
        'run again every DURATION (30s, 10m, 1h or seconds) until stopped',
        duration,
      )
      .addOption(
        withChoices(
          new Option(
            '--output-format <format>',
            'stdout: local paths of the files fetched (the default off a terminal), or json: an array of a record per file considered (under --watch, a JSON line per file fetched, failed, superseded or removed)',
          ),
          ['paths', 'json'],
          'output formats',
        ),
      );
    withOptions(
      command,
      settingOptionsFor('sync', 'checks', {
        requireChecksum: 'fail a file the store states no checksum for',
      }),
    ).option(
      '--verbose',
      'a line for every file, unchanged ones (verified copies) included; on a terminal, the paths fetched too',
    );
    withOptions(command, settingOptionsFor('sync', 'transfer'))
      .addHelpText(
        'after',
        '\nExit status: 0 when every file this run selected was fetched and verified or is\n' +
          'held by the sync record, 1 when a file failed, 75 when another sync of the same\n' +
          'data root and filters runs, 130/143 when interrupted (the next run resumes).\n' +
          'Every run looks at each held file (one stat) and fetches again those deleted\n' +
          'here; --full also fetches those edited here, comparing the whole selection.\n' +
          'A superseded version is reported once, by the run that finds it.' +
          '\n\nOn a terminal, sync shows its summary, not the paths (--verbose lists them,\n' +
          'relative to the working folder); piped, stdout lists the local path of each\n' +
          'file fetched. --watch prints one line per run.',
      )
      .action((options) => run(async () => (await import('../commands/sync.js')).sync(options, io)));
  },
};
