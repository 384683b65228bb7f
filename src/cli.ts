/**
 * The command-line program: declares commands and options, maps them to `commands/*` calls, prints errors
 * and owns the exit status. Command modules load lazily so `--help` stays fast.
 */
import { readFileSync } from 'node:fs';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CompletionShell } from './commands/completion.js';
import { commandLineHint } from './commands/hints.js';
import type { CommandIO, GlobalOptions } from './commands/io.js';
import { didYouMean } from './did-you-mean.js';
import { ExitCode, isMissionDataError } from './errors.js';
import { OUTPUT_FORMATS } from './output.js';
import { QUERY_FILTERS } from './query-vocabulary.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Options shared by every client command, declared once. */
const GLOBAL_OPTIONS: ReadonlyArray<() => Option> = [
  () => new Option('--url <url>', 'service address (env MISSION_DATA_ACCESS_URL)'),
  () => new Option('--api-key <key>', 'API key, sent to the service on every request (env MISSION_API_KEY)'),
  () => new Option('--token <token>', 'bearer token for the /authorized/ routes (env MISSION_ACCESS_TOKEN)'),
  () => new Option('--data-dir <dir>', 'local data root (env MISSION_DATA_DIR; default ./data)'),
  () => new Option('-q, --quiet', 'print only results and errors'),
  () => new Option('--debug', 'print stack traces and request details'),
];

/**
 * The commands a global option acts on, where that is not every client command: help shows an option only
 * where it does something (`query` writes no file, so the data root means nothing to it).
 */
const ACTS_ON: Readonly<Record<string, readonly string[]>> = {
  '--data-dir': ['download', 'upload', 'list', 'get', 'set', 'unset'],
};

/** The global options of one client command (or `config` subcommand). */
function globalOptionsFor(command: string): ReadonlyArray<() => Option> {
  return GLOBAL_OPTIONS.filter((make) => {
    const users = ACTS_ON[make().long ?? ''];
    return users === undefined || users.includes(command);
  });
}

/**
 * A fixed list of values, checked by the parser with a did-you-mean: `--output-format jsn` is answered
 * "Allowed choices are table, json, csv. Did you mean json?" (commander's own check suggests nothing).
 */
function withChoices(option: Option, choices: readonly string[], plural: string): Option {
  return option.choices(choices).argParser((value: string) => {
    if (choices.includes(value)) return value;
    const suggestion = didYouMean(value, choices, plural);
    throw new InvalidArgumentError(
      `Allowed choices are ${choices.join(', ')}.${suggestion ? ` ${suggestion}` : ''}`,
    );
  });
}

/** Query filters, shared by `query` and `download`, declared from the one table of filters. */
const FILTER_OPTIONS: ReadonlyArray<() => Option> = QUERY_FILTERS.map((filter) => () => {
  const option = new Option(filter.flag, filter.help);
  // Only the table's values are few and fixed enough to be refused by the parser; the others are checked
  // with the service's own messages.
  return filter.name === 'table' ? withChoices(option, filter.choices, 'tables') : option;
});

function positiveInteger(name: string, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1 || number > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}.`);
    }
    return number;
  };
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65535)
    throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  return number;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function withOptions(command: Command, options: ReadonlyArray<() => Option>): Command {
  for (const option of options) command.addOption(option());
  return command;
}

/** Builds the program. `run` receives each command's work so `main` can own errors and exit codes. */
export function buildProgram(io: CommandIO, run: (work: () => Promise<number | undefined>) => void): Command {
  const program = new Command('mission-data')
    .description("Find, download and upload files of the science data center's file store.")
    .version(packageJson.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
Environment:
  MISSION_DATA_ACCESS_URL  service address (fallback IMAP_DATA_ACCESS_URL)
  MISSION_API_KEY          API key (fallback IMAP_API_KEY)
  MISSION_ACCESS_TOKEN     bearer token (fallback IMAP_ACCESS_TOKEN)
  MISSION_DATA_DIR         local data root (fallback IMAP_DATA_DIR)
  MISSION_DATA_CONFIG      config file to use instead of the default one
  HTTPS_PROXY, HTTP_PROXY  proxy for the service and the object store (lower-case forms too)
  NO_PROXY                 hosts reached without the proxy, e.g. localhost,.internal.example

Examples:
  mission-data serve --demo --port 8080
  mission-data query --url http://127.0.0.1:8080 --instrument mag
  mission-data download --url http://127.0.0.1:8080 --instrument mag --data-level l1a`,
    );

  const clientCommand = (name: string) =>
    withOptions(
      program.command(name).exitOverride().helpOption('-h, --help', 'show help'),
      globalOptionsFor(name),
    );

  withOptions(
    clientCommand('query').description('find files by their metadata; prints a table, JSON or CSV'),
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
    .action((options) => run(async () => (await import('./commands/query.js')).query(options, io)));

  withOptions(
    clientCommand('download')
      .description('download files into the local data root')
      .argument(
        '[paths...]',
        "file names or storage paths; '-' reads them from stdin (lines or a JSON array)",
      ),
    FILTER_OPTIONS,
  )
    .option('-f, --force', 'replace files that exist already')
    .option('--dry-run', 'print what would be downloaded, checked or skipped; fetch nothing')
    .option('--verbose', 'on a terminal, a line for every file (not only skipped or failed ones)')
    .option('-c, --concurrency <n>', 'files downloaded at once', positiveInteger('--concurrency', 64), 8)
    .option(
      '--connections <n>',
      'connections one large file is fetched over, in parts (1: one stream)',
      positiveInteger('--connections', 16),
      4,
    )
    .option(
      '--part-size <MiB>',
      'size of the parts of a large file',
      positiveInteger('--part-size', 1024),
      16,
    )
    .addHelpText('after', '\nWith query options instead of paths, downloads every matching file.')
    .action((paths: string[], options) =>
      run(async () => (await import('./commands/download.js')).download(paths, options, io)),
    );

  clientCommand('upload')
    .description('upload files, each named and placed as the naming rules say')
    .argument('<paths...>', 'files inside the data root (or relative to the working directory, or absolute)')
    .option('-c, --concurrency <n>', 'files uploaded at once', positiveInteger('--concurrency', 16), 4)
    .option('--no-checksum', 'do not send Content-MD5 (skips reading each file twice; faster on fast links)')
    .option('--dry-run', 'check names and find the files; send nothing, ask the service nothing')
    .option('--verbose', 'on a terminal, a line for every file (not only already stored or failed ones)')
    .action((paths: string[], options) =>
      run(async () => (await import('./commands/upload.js')).upload(paths, options, io)),
    );

  program
    .command('serve')
    .description('run the embedded reference server (the whole service, in-process)')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, 8080)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--store <dir>', 'folder holding the stored objects', 'mission-data-store')
    .option('--api-key <key>', 'accept uploads and /api-key/ routes only with this key (repeatable)', collect)
    .option('--token <token>', 'bearer token /authorized/ routes accept (repeatable)', collect)
    .addOption(
      new Option('--wire <mode>', 'how answers are wrapped')
        .choices(['envelope', 'envelope-200', 'gateway'])
        .default('envelope'),
    )
    .addOption(
      new Option('--dialect <dialect>', "which service to play: the spec's, today's or both")
        .choices(['both', 'spec', 'today'])
        .default('both'),
    )
    .option('--demo', 'fill an empty store with a demo archive')
    .option('-q, --quiet', 'do not log requests')
    .option('--debug', 'print stack traces')
    .action((options) => run(async () => (await import('./commands/serve.js')).serve(options, io)));

  program
    .command('completion')
    .description('print a shell completion script: commands, options and their values')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .addArgument(
      new Argument('<shell>', 'the shell to complete in').choices([
        'bash',
        'zsh',
        'fish',
      ] satisfies CompletionShell[]),
    )
    .action((shell: CompletionShell) =>
      run(async () => (await import('./commands/completion.js')).completion(shell, program, io)),
    );

  const config = program
    .command('config')
    .description('show and change settings (url, api-key, data-dir, token)')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .addHelpText(
      'after',
      '\nSettings resolve as: flag > environment > config file > default.\nThe config file is config.json in the configuration folder (`mission-data config list` shows it).',
    );
  const configCommand = (name: string) =>
    withOptions(
      config.command(name).exitOverride().helpOption('-h, --help', 'show help'),
      globalOptionsFor(name),
    );
  configCommand('list')
    .description('show every setting, its value and where it comes from')
    .action((options: GlobalOptions) =>
      run(async () => {
        await (await import('./commands/config.js')).configList(options, io);
        return ExitCode.Success;
      }),
    );
  configCommand('get')
    .description('print one setting (exit 1 when unset)')
    .argument('<key>', 'url, api-key, data-dir or token')
    .action((key: string, options: GlobalOptions) =>
      run(async () => (await import('./commands/config.js')).configGet(key, options, io)),
    );
  configCommand('set')
    .description('store a setting in the config file')
    .argument('<key>', 'url, api-key, data-dir or token')
    .argument('<value>', 'the value')
    .action((key: string, value: string, options: GlobalOptions) =>
      run(async () => {
        await (await import('./commands/config.js')).configSet(key, value, options, io);
        return ExitCode.Success;
      }),
    );
  configCommand('unset')
    .description('remove a setting from the config file')
    .argument('<key>', 'url, api-key, data-dir or token')
    .action((key: string, options: GlobalOptions) =>
      run(async () => {
        await (await import('./commands/config.js')).configUnset(key, options, io);
        return ExitCode.Success;
      }),
    );
  for (const command of [...program.commands, ...config.commands]) {
    const examples = EXAMPLES[command.name()];
    if (examples)
      command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  ${line}`).join('\n')}`);
  }
  return program;
}

/** Two or three real examples of each command, shown at the end of its help. */
const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  query: [
    'mission-data query --instrument mag --start-date 20250101 --end-date 20250131',
    'mission-data query --instrument swe --data-level l1b --version latest --output-format csv > swe.csv',
    'mission-data query --table ancillary --instrument mag --output-format json',
  ],
  download: [
    'mission-data download imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
    'mission-data download --instrument mag --data-level l1a --start-date 20250101 --end-date 20250107',
    'mission-data query --instrument hit --output-format json | mission-data download -',
  ],
  upload: [
    'mission-data upload imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
    'MISSION_API_KEY=… mission-data upload imap/swe/l0/2025/01/*.pkts',
    'mission-data upload --data-dir /srv/mission/data --concurrency 8 imap/hit/l1a/2025/02/*.cdf',
  ],
  serve: [
    'mission-data serve --demo',
    'mission-data serve --port 0 --store ./store --api-key secret',
    'mission-data serve --host 0.0.0.0 --port 8080 --wire gateway',
  ],
  config: [
    'mission-data config list',
    'mission-data config set url http://127.0.0.1:8080',
    'mission-data config get data-dir',
  ],
  list: ['mission-data config list', 'mission-data config list --url http://127.0.0.1:8080'],
  get: ['mission-data config get url', 'mission-data config get api-key'],
  set: [
    'mission-data config set url http://127.0.0.1:8080',
    'mission-data config set data-dir ~/mission-data',
  ],
  unset: ['mission-data config unset api-key'],
  completion: [
    'source <(mission-data completion bash)            # in ~/.bashrc',
    'mission-data completion zsh > ~/.zsh/completions/_mission-data',
    'mission-data completion fish > ~/.config/fish/completions/mission-data.fish',
  ],
};

function printError(error: unknown, io: CommandIO, debug: boolean): number {
  if (isMissionDataError(error)) {
    io.stderr.write(`Error: ${error.message}\n`);
    const hint = commandLineHint(error);
    if (hint) io.stderr.write(`Hint: ${hint}\n`);
    if (debug && error.stack) io.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`Error: ${message}\n`);
  if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  else io.stderr.write('This is a bug in mission-data; run again with --debug for details.\n');
  return ExitCode.Failure;
}

/** A reader that stops early (`| head`) closes the pipe: the rest of the results is simply not wanted. */
function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') process.stderr.write(`Error: cannot write results: ${error.message}\n`);
}

/** Runs the command line with `argv` (as `process.argv`) and returns the exit status. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(ExitCode.Interrupted); // A second Ctrl-C leaves at once.
    interrupted = true;
    controller.abort(new Error(`Interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Kept after `main` returns: the pipe can break while buffered output is still being written.
  process.stdout.off('error', onStdoutError).on('error', onStdoutError);
  const io: CommandIO = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    signal: controller.signal,
  };
  const debug = argv.includes('--debug');
  let work: (() => Promise<number | undefined>) | undefined;
  try {
    const program = buildProgram(io, (next) => {
      work = next;
    });
    await program.parseAsync([...argv]);
    const status = work ? ((await work()) ?? ExitCode.Success) : ExitCode.Success;
    return interrupted && status !== ExitCode.Success ? ExitCode.Interrupted : status;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with exit code 0; everything else commander rejects is a usage error.
      return error.exitCode === 0 ? ExitCode.Success : ExitCode.Usage;
    }
    const status = printError(error, io, debug);
    return interrupted ? ExitCode.Interrupted : status;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
