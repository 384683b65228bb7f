/** `mission-data download`: files by name, path or query, into the local data root. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { FILTER_OPTIONS, settingOptionsFor, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const download: CommandDeclaration = {
  name: 'download',
  client: true,
  examples: EXAMPLES.download,
  declare: (command, { run, io }) => {
    command
      .description('download files into the local data root')
      .argument(
        '[paths...]',
        "file names, storage paths or globs of them; '-' reads them from stdin (lines, or query's JSON or CSV)",
      );
    withOptions(command, FILTER_OPTIONS)
      .option('-f, --force', 'replace files that exist already')
      .option('--only-missing', 'with query options: fetch only the files `status` lists as missing')
      .option(
        '--update',
        'with query options: fetch what `status` lists: missing, newer versions, changed files',
      )
      .option('--dry-run', 'print what would be downloaded, checked or skipped; fetch nothing');
    withOptions(command, settingOptionsFor('download', 'checks'))
      .option('--verbose', 'a line for every file, unchanged ones (verified copies) included')
      .addOption(
        withChoices(
          new Option(
            '--output-format <format>',
            'stdout: local paths, one per line (the default off a terminal), or a JSON record per file',
          ),
          ['paths', 'json'],
          'output formats',
        ),
      );
    withOptions(command, settingOptionsFor('download', 'transfer'))
      .addHelpText(
        'after',
        '\nWith query options instead of paths, downloads every matching file.\n' +
          '\nA glob (*, ?, [...]) in a file name or a layout path downloads what the archive\n' +
          'holds that matches it (one query of its fixed parts: instrument, level,\n' +
          "descriptor, dates). Quote it ('imap_mag_l2_norm_202501*') so the shell passes it\n" +
          'on instead of matching it against local files; --dry-run lists the matches.\n' +
          '\nBeside a glob or a folder, --version selects among the matches: latest fetches\n' +
          'only the newest version of each product and day, as query --version latest lists\n' +
          "them ('imap/mag/l1a/2024/01/*' --version latest); v01-00, only that version.\n" +
          'Files named one by one carry their version in their names.',
      )
      .action((paths: string[], options) =>
        run(async () => (await import('../commands/download.js')).download(paths, options, io)),
      );
  },
};
