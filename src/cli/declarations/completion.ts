/** `mission-data completion`: a shell's completion script, written from the program it is given. */

import { Argument } from 'commander';
import type { CompletionShell } from '../completion/model.js';
import { EXAMPLES } from '../examples.js';
import type { CommandDeclaration } from './declaration.js';

export const completion: CommandDeclaration = {
  name: 'completion',
  client: false,
  examples: EXAMPLES.completion,
  declare: (command, { run, io, program }) =>
    command
      .description('print a shell completion script: commands, options and their values')
      .addArgument(
        // Listed here rather than imported: the model reads the mission's value lists, which --help need not load.
        new Argument('<shell>', 'the shell to complete in').choices([
          'bash',
          'zsh',
          'fish',
          'powershell',
        ] satisfies CompletionShell[]),
      )
      .action((shell: CompletionShell) =>
        run(async () => (await import('../commands/completion.js')).completion(shell, program, io)),
      ),
};
