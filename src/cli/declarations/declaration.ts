/**
 * What a command's declaration is: its name, whether it is a client command, its examples, and a function that
 * gives it its description, arguments, options, help text and action. The action loads the command's body
 * (`commands/<name>.ts`) with `import()` when the command runs, never before.
 */
import type { Command } from 'commander';
import type { CommandIO } from '../io.js';

/** Hands a command's work to `main`, which runs it and owns its errors and exit status. */
export type Run = (work: () => Promise<number | undefined>) => void;

/** What an action may use: where to hand its work, the streams, and the whole program (`completion` reads it). */
export interface DeclarationContext {
  readonly run: Run;
  readonly io: CommandIO;
  readonly program: Command;
}

/** One command of the program (or a subcommand of one). */
export interface CommandDeclaration {
  readonly name: string;
  /** Takes the options shared by the client commands (those of them that act on it), before or after its name. */
  readonly client: boolean;
  /** Shown at the end of its help. */
  readonly examples: readonly string[] | undefined;
  /** Gives `command` (made and named by the program) its description, arguments, options, help text and action. */
  readonly declare: (command: Command, context: DeclarationContext) => void;
  readonly subcommands?: readonly CommandDeclaration[];
}
