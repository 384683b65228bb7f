/** `mission-data upload`: files, each named and placed as the naming rules say. */

import { Option } from 'commander';
import { EXAMPLES } from '../examples.js';
import { settingOptionsFor, withChoices, withOptions } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

export const upload: CommandDeclaration = {
  name: 'upload',
  client: true,
  examples: EXAMPLES.upload,
  declare: (command, { run, io }) => {
    command
      .description('upload files, each named and placed as the naming rules say')
      .argument(
        '<paths...>',
        'files inside the data root (or relative to the working directory, or absolute)',
      );
    withOptions(command, settingOptionsFor('upload', 'transfer', { concurrency: 'files uploaded at once' }));
    withOptions(command, settingOptionsFor('upload', 'checks'))
      .option(
        '--no-checksum',
        'do not send Content-MD5 (skips reading each file twice; faster on fast links)',
      )
      .option('--dry-run', 'check names and find the files; send nothing, ask the service nothing')
      .option(
        '--ignore-folder',
        'upload a file found in a folder that disagrees with its name, by its name (which alone sets where it is stored)',
      )
      .option('--verbose', 'a line for every file, those already stored included')
      .addOption(
        withChoices(
          new Option(
            '--output-format <format>',
            "stdout: nothing but a dry run's lines, or a JSON record per file",
          ),
          ['text', 'json'],
          'output formats',
        ),
      )
      .action((paths: string[], options) =>
        run(async () => (await import('../commands/upload.js')).upload(paths, options, io)),
      );
  },
};
