/**
 * The command-line program: declares commands and options and maps them to `commands/*` calls (`main.ts` runs
 * it, prints errors and owns the exit status). Command modules load lazily so `--help` stays fast.
 */
import { readFileSync } from 'node:fs';
import { Argument, Command, Option } from 'commander';
import { ExitCode, UsageError } from '../core/errors.js';
import { OUTPUT_FORMATS } from '../output.js';
import type { CompletionShell } from './completion/model.js';
import type { CommandIO, GlobalOptions } from './io.js';
import {
  collect,
  connectionCount,
  duration,
  EXAMPLES,
  FILTER_OPTIONS,
  GLOBAL_OPTIONS,
  globalOptionsFor,
  port,
  positiveInteger,
  withChoices,
  withOptions,
} from './options.js';
import { nameUsageErrors } from './usage-errors.js';

/**
 * The package's version, from its package.json: one folder up from the bundle (`dist/mission-data.js`), two
 * from this module's own place (`src/cli/`, `dist/cli/`, where tests import it).
 */
function packageVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    let text: string;
    try {
      text = readFileSync(new URL(path, import.meta.url), 'utf8');
    } catch {
      continue;
    }
    const found = JSON.parse(text) as { name?: string; version?: string };
    if (found.name === 'mission-data' && typeof found.version === 'string') return found.version;
  }
  return 'unknown';
}

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

/** Builds the program. `run` receives each command's work so `main` can own errors and exit codes. */
export function buildProgram(io: CommandIO, run: (work: () => Promise<number | undefined>) => void): Command {
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
        "file names or storage paths; '-' reads them from stdin (lines, or query's JSON or CSV)",
      ),
    FILTER_OPTIONS,
  )
    .option('-f, --force', 'replace files that exist already')
    .option('--only-missing', 'with query options: fetch only the files `status` lists as missing')
    .option(
      '--update',
      'with query options: fetch what `status` lists: missing, newer versions, changed files',
    )
    .option('--dry-run', 'print what would be downloaded, checked or skipped; fetch nothing')
    .option(
      '--require-checksum',
      'fail a file the store states no checksum for (otherwise it counts as not verified)',
    )
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
    )
    .option('-c, --concurrency <n>', 'files downloaded at once', positiveInteger('--concurrency', 64), 8)
    .option(
      '--connections <n>',
      'connections one large file is fetched over, in parts (1: one stream; default 8); auto: measured, one and more while they raise the speed, up to 32',
      connectionCount,
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

  withOptions(
    clientCommand('sync').description(
      'keep the data root in step with the archive: fetch what is new since the last run (stdout: paths fetched)',
    ),
    FILTER_OPTIONS,
  )
    .option('--all-versions', 'keep every version of each product (default: only the newest)')
    .option('--full', 'compare the whole selection, noticing held files deleted or changed locally')
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
          'stdout: local paths of the files fetched (default), or a JSON record per file considered',
        ),
        ['paths', 'json'],
        'output formats',
      ),
    )
    .option('--require-checksum', 'fail a file the store states no checksum for')
    .option('--verbose', 'a line for every file, unchanged ones (verified copies) included')
    .option('-c, --concurrency <n>', 'files downloaded at once', positiveInteger('--concurrency', 64), 8)
    .option(
      '--connections <n>',
      'connections one large file is fetched over, in parts (1: one stream; default 8); auto: measured',
      connectionCount,
    )
    .option(
      '--part-size <MiB>',
      'size of the parts of a large file',
      positiveInteger('--part-size', 1024),
      16,
    )
    .addHelpText(
      'after',
      '\nExit status: 0 when every selected file is held and verified, 1 when a file failed, 75 when another sync\n' +
        'of the same data root and filters is running, 130/143 when interrupted (the next run resumes).',
    )
    .action((options) => run(async () => (await import('./commands/sync.js')).sync(options, io)));

  withOptions(
    clientCommand('coverage').description(
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
      '\nCalendar marks: # in the archive, @ here (latest version), ^ here (older than the archive), . no file.',
    )
    .action((options) => run(async () => (await import('./commands/coverage.js')).coverage(options, io)));

  withOptions(
    clientCommand('status').description(
      'compare the local data root with the archive: missing, outdated, extra and changed files (exit 1 when any but extra)',
    ),
    FILTER_OPTIONS,
  )
    .addOption(
      withChoices(
        new Option('--output-format <format>', 'a line per file, or JSON'),
        ['text', 'json'],
        'output formats',
      ).default('text'),
    )
    .option('--strict', 'extra files count too: exit 1 unless the data root holds nothing else')
    .option(
      '--page-size <n>',
      'records asked per page of a service that pages',
      positiveInteger('--page-size', 10_000),
      10_000,
    )
    .action((options) => run(async () => (await import('./commands/status.js')).status(options, io)));

  clientCommand('upload')
    .description('upload files, each named and placed as the naming rules say')
    .argument('<paths...>', 'files inside the data root (or relative to the working directory, or absolute)')
    .option('-c, --concurrency <n>', 'files uploaded at once', positiveInteger('--concurrency', 16), 4)
    .option('--no-checksum', 'do not send Content-MD5 (skips reading each file twice; faster on fast links)')
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
      run(async () => (await import('./commands/upload.js')).upload(paths, options, io)),
    );

  program
    .command('serve')
    .description('run the embedded reference server (the whole service, in-process)')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, 8080)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(
      '--store <dir|s3-url>',
      'folder holding the stored objects, or an S3 bucket: s3://BUCKET[/PREFIX]',
      'mission-data-store',
    )
    .addOption(
      new Option('--s3-endpoint <url>', 'endpoint of an S3-compatible store (path-style)').env(
        'AWS_ENDPOINT_URL_S3',
      ),
    )
    .addOption(new Option('--aws-endpoint <url>').env('AWS_ENDPOINT_URL').hideHelp())
    .addOption(
      new Option('--s3-region <region>', "the bucket's region (default us-east-1)").env('AWS_REGION'),
    )
    .addOption(
      new Option(
        '--index <url>',
        'PostgreSQL index: postgres://USER:PASS@HOST:PORT/DB (default: in memory)',
      ).env('MISSION_DATA_INDEX_URL'),
    )
    .option('--reindex', 'once serving, add records for objects in the store that have none')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (with --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
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
    .option(
      '--url-life <seconds>',
      'seconds the pre-signed URLs stay valid (default: 1 hour for uploads, 1 day for downloads)',
      positiveInteger('--url-life', 604_800),
    )
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
    .argument('<value>', 'the value; - reads it from stdin (keeps a key out of the shell history)')
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
  // The options every client command shares are taken before the command too (`mission-data --url … query`), as
  // aws-cli and gh take theirs; given on both sides, the one after the command wins.
  for (const make of GLOBAL_OPTIONS) {
    program.addOption(make().helpGroup('Options of the client commands (before or after the command):'));
  }
  program.hook('preAction', (_program, action) => inheritGlobalOptions(program, action));
  for (const command of [...program.commands, ...config.commands]) {
    const examples = EXAMPLES[command.name()];
    if (examples)
      command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  ${line}`).join('\n')}`);
  }
  nameUsageErrors(program);
  return program;
}
