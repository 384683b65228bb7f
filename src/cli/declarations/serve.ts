/**
 * `mission-data serve`: the embedded reference server; its body alone loads `server/`. The flags of the store's
 * and the index's backends come from what each backend declares (the server's light registry).
 */

import { type Command, Option } from 'commander';
import { commandLineSettings, storeHelp } from '../../server/backend-registry.js';
import { EXAMPLES } from '../examples.js';
import { collect, port, positiveInteger } from '../options.js';
import type { CommandDeclaration } from './declaration.js';

/**
 * The flags of the backends' settings, as each backend declares them (`--s3-endpoint`, `--index`), with the
 * environment variable each falls back to; a fallback of another name is accepted but kept out of help.
 */
function backendOptions(): Option[] {
  return commandLineSettings().flatMap((setting) => {
    const option = new Option(`${setting.flag} ${setting.value ?? '<value>'}`, setting.help);
    if (setting.env) option.env(setting.env);
    if (!setting.fallback) return [option];
    const fallback = new Option(`${setting.fallback.flag} ${setting.value ?? '<value>'}`)
      .env(setting.fallback.env)
      .hideHelp();
    return [option, fallback];
  });
}

/** Where the server listens and what it keeps: the address, the store and the index with their backends' flags. */
function placeOptions(command: Command): void {
  const store = storeHelp();
  command
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, 8080)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(`--store ${store.value}`, store.help, 'mission-data-store');
  for (const option of backendOptions()) command.addOption(option);
  command.option('--reindex', 'once serving, add records for objects in the store that have none');
}

/** Who may talk to the server: HTTPS, and the keys and tokens its guarded routes accept. */
function accessOptions(command: Command): void {
  command
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (with --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--api-key <key>', 'accept uploads and /api-key/ routes only with this key (repeatable)', collect)
    .option('--token <token>', 'bearer token /authorized/ routes accept (repeatable)', collect);
}

/** Which service the server plays and how it answers: the wire form, the dialect, the demo, URLs and turns. */
function serviceOptions(command: Command): void {
  command
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
    .option(
      '--upload-concurrency <n>',
      'uploads worked on at once while queries or downloads are answered (default 2; 16 with none); the others wait their turn',
      positiveInteger('--upload-concurrency', 1_000),
    );
}

/** What an operator watches and how the server stops: metrics, the log, the drain on SIGTERM, SIGHUP or Ctrl-C. */
function operatorOptions(command: Command): void {
  command
    .option('--no-metrics', 'keep no metrics and answer no /metrics')
    .addOption(
      new Option(
        '--metrics-port <port>',
        'answer /metrics on this port, not the API one (it must differ from --port)',
      )
        .argParser(port)
        .env('MISSION_DATA_METRICS_PORT'),
    )
    .addOption(
      new Option(
        '--metrics-token <token>',
        '/metrics needs Authorization: Bearer <token> (at least 8 characters)',
      ).env('MISSION_DATA_METRICS_TOKEN'),
    )
    .addOption(
      new Option('--log-format <format>', 'a line of text or a JSON object per request and event')
        .choices(['human', 'json'])
        .default('human')
        .env('MISSION_DATA_LOG_FORMAT'),
    )
    .addOption(
      new Option(
        '--drain-timeout <seconds>',
        'on SIGTERM, SIGHUP, Ctrl-C or Ctrl-Break, seconds the requests under way may take to finish (default 5)',
      )
        .argParser(positiveInteger('--drain-timeout', 3_600))
        .env('MISSION_DATA_DRAIN_TIMEOUT'),
    );
}

export const serve: CommandDeclaration = {
  name: 'serve',
  client: false,
  examples: EXAMPLES.serve,
  declare: (command, { run, io }) => {
    command.description('run the embedded reference server (the whole service, in-process)');
    placeOptions(command);
    accessOptions(command);
    serviceOptions(command);
    operatorOptions(command);
    command
      .option('-q, --quiet', 'do not log requests')
      .option('--debug', 'print stack traces')
      .action((options) => run(async () => (await import('../commands/serve.js')).serve(options, io)));
  },
};
