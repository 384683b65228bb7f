/**
 * The command-line program: the program's own options and help, and its commands built from their declarations
 * (`declarations/`), each of which loads its body (`commands/*`) only when it runs, so `--help` stays fast.
 * `main.ts` runs it, prints errors and owns the exit status.
 */
import { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { SETTINGS_BY_GROUP } from '../core/settings.js';
import { completion } from './declarations/completion.js';
import { config } from './declarations/config.js';
import { coverage } from './declarations/coverage.js';
import type { CommandDeclaration, DeclarationContext, Run } from './declarations/declaration.js';
import { download } from './declarations/download.js';
import { query } from './declarations/query.js';
import { serve } from './declarations/serve.js';
import { status } from './declarations/status.js';
import { sync } from './declarations/sync.js';
import { upload } from './declarations/upload.js';
import { verify } from './declarations/verify.js';
import type { CommandIO } from './io.js';
import { dropHelpDefaults, GLOBAL_OPTIONS, globalOptionsFor, withOptions } from './options.js';
import { packageVersion } from './package-version.js';
import { nameUsageErrors } from './usage-errors.js';

/** The commands, in the order help lists them; each declared in `declarations/<name>.ts`. */
const COMMANDS: readonly CommandDeclaration[] = [
  query,
  download,
  sync,
  coverage,
  status,
  verify,
  upload,
  serve,
  completion,
  config,
];

/**
 * Hands the shared options given before the command to the command that runs; one it does not take (`--data-dir`
 * for `query`, which writes no file) is refused, as it would be after the command.
 */
function inheritGlobalOptions(program: Command, action: Command): void {
  for (const make of GLOBAL_OPTIONS) {
    const option = make();
    const key = option.attributeName();
    if (program.getOptionValueSource(key) !== 'cli') continue;
    const name = [action.parent?.parent ? action.parent.name() : undefined, action.name()]
      .filter(Boolean)
      .join(' ');
    if (!action.options.some((own) => own.attributeName() === key)) {
      throw new UsageError(`${option.long} does not apply to ${name}.`, {
        hint: `See mission-data ${name} --help for the options it takes.`,
      });
    }
    // Given after the command too: that one wins.
    if (action.getOptionValueSource(key) === 'cli') continue;
    action.setOptionValueWithSource(key, program.getOptionValue(key), 'cli');
  }
}

/**
 * Adds the command `declaration` declares to `parent`. Commander hands each new command the program's help
 * option, output and exit override; a client command also gets the shared options that act on it.
 */
function addCommand(parent: Command, declaration: CommandDeclaration, context: DeclarationContext): void {
  const command = parent.command(declaration.name);
  if (declaration.client) withOptions(command, globalOptionsFor(declaration.name));
  declaration.declare(command, context);
  for (const sub of declaration.subcommands ?? []) addCommand(command, sub, context);
  if (declaration.examples) {
    const lines = declaration.examples.map((line) => `  ${line}`).join('\n');
    command.addHelpText('after', `\nExamples:\n${lines}`);
  }
}

/** The width of the Environment section's names: a longer name has its words on the next line. */
const ENVIRONMENT_NAME_WIDTH = 23;
/** The width of the help's lines. */
const HELP_WIDTH = 79;

/** The Environment section's lines of the settings: each one's first variable, its words and its fallbacks. */
function environmentHelp(): string {
  const indent = ' '.repeat(ENVIRONMENT_NAME_WIDTH + 4);
  return SETTINGS_BY_GROUP.map((spec) => {
    const [first = '', ...fallbacks] = spec.env;
    const words = `${spec.title}${fallbacks.length > 0 ? ` (fallback ${fallbacks.join(', ')})` : ''}`;
    const lines =
      first.length > ENVIRONMENT_NAME_WIDTH
        ? [`  ${first}`, indent]
        : [`  ${first.padEnd(ENVIRONMENT_NAME_WIDTH)}  `];
    for (const word of words.split(' ')) {
      const last = lines.length - 1;
      const line = lines[last] as string;
      if (line.length + word.length > HELP_WIDTH && line.trim() !== '' && line !== indent)
        lines.push(`${indent}${word}`);
      else lines[last] = `${line}${line.endsWith(' ') ? '' : ' '}${word}`;
    }
    return lines.join('\n');
  }).join('\n');
}

/** Builds the program. `run` receives each command's work so `main` can own errors and exit codes. */
export function buildProgram(io: CommandIO, run: Run): Command {
  const program = new Command('mission-data')
    .description("Find, download and upload files of the science data center's file store.")
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Usage errors are printed by `main`, in the tool's style (see usage-errors.ts).
      outputError: () => {},
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
Environment:
${environmentHelp()}
  MISSION_DATA_CONFIG      config file to use instead of the default one
  HTTPS_PROXY, HTTP_PROXY  proxy for the service and the object store (also
                           in lower case)
  NO_PROXY                 hosts reached without the proxy, e.g.
                           localhost,.internal.example

Examples:
  mission-data serve --demo --port 8080
  mission-data query --url http://127.0.0.1:8080 --instrument mag
  mission-data download --url http://127.0.0.1:8080 --instrument mag`,
    );

  const context: DeclarationContext = { run, io, program };
  for (const declaration of COMMANDS) addCommand(program, declaration, context);
  // The options every client command shares are taken before the command too (`mission-data --url … query`), as
  // aws-cli and gh take theirs; given on both sides, the one after the command wins.
  for (const make of GLOBAL_OPTIONS) {
    program.addOption(make().helpGroup('Options of the client commands (before or after the command):'));
  }
  program.hook('preAction', (_program, action) => {
    inheritGlobalOptions(program, action);
    dropHelpDefaults(action);
  });
  nameUsageErrors(program);
  return program;
}
