#!/usr/bin/env node
/**
 * Prints the command line's whole surface as one text: every help page, the completion scripts, the answer
 * and exit status of a list of wrong invocations, and the JSON (and other machine-read) output of each command
 * against a demo server. Two builds that print the same text behave the same to a user and a script:
 *
 *   npm run build && node scripts/surface.js > before.txt
 *   (change, build) node scripts/surface.js > after.txt && diff before.txt after.txt
 *
 * Temporary folders and the server's port are written as <TMP> and <PORT>, so two runs compare byte for byte.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/mission-data.js');
const work = mkdtempSync(join(tmpdir(), 'md-surface-'));
const home = join(work, 'home');
mkdirSync(join(home, 'config'), { recursive: true });
let port = '';

function environment(extra = {}) {
  return { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...extra };
}

function normalize(text) {
  let out = text.split(work).join('<TMP>');
  if (port) out = out.split(`127.0.0.1:${port}`).join('127.0.0.1:<PORT>');
  // Times and durations vary between runs.
  out = out.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<TIME>');
  out = out.replace(/\b\d+(?:\.\d+)? ?(?:ms|s)\b/g, '<DURATION>');
  out = out.replace(/"(durationMs|elapsedMs|seconds|bytesPerSecond|speed)": ?[\d.]+/g, '"$1": <N>');
  out = out.replace(/\(\d+(?:\.\d+)? [KMG]?i?B\/s\)/g, '(<SPEED>)');
  out = out.replace(/request id [0-9a-f]{16}/g, 'request id <ID>');
  return sortRuns(out);
}

/** Lines of files finished in parallel come in any order: each run of lines that begin alike is sorted. */
function sortRuns(text) {
  const lines = text.split('\n');
  const out = [];
  let run = [];
  let word = '';
  const flush = () => {
    out.push(...run.sort());
    run = [];
  };
  for (const line of lines) {
    const first = /^(downloaded|would download|fetched|failed|skipped) /.exec(line)?.[1] ?? '';
    if (first === '' || first !== word) flush();
    word = first;
    if (first === '') out.push(line);
    else run.push(line);
  }
  flush();
  return out.join('\n');
}

const sections = [];
function run(args, { env = {}, input = '', cwd = work, title } = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: environment(env),
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const shownEnv = Object.entries(env)
    .map(([key, value]) => `${key}=${value} `)
    .join('');
  sections.push(
    normalize(
      `### ${title ?? `${shownEnv}mission-data ${args.join(' ')}`}\nexit ${result.status}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`,
    ),
  );
  return result;
}

// Help of every command and subcommand, and the version.
const commands = [
  [],
  ['query'],
  ['download'],
  ['sync'],
  ['upload'],
  ['coverage'],
  ['status'],
  ['verify'],
  ['serve'],
  ['completion'],
  ['config'],
  ['config', 'list'],
  ['config', 'get'],
  ['config', 'set'],
  ['config', 'unset'],
];
for (const command of commands) run([...command, '--help']);
run(['help']);
run(['help', 'download']);
run(['--version']);
for (const shell of ['bash', 'zsh', 'fish']) run(['completion', shell]);

// Wrong invocations: the message and the exit status.
const wrong = [
  ['nosuchcommand'],
  ['qurey'],
  ['query'],
  ['query', '--no-such-flag'],
  ['query', '--instrument', 'mag', '--output-format', 'jsn'],
  ['query', '--instrument', 'mag', '--instrument', 'swe'],
  ['query', '--instrument', 'mag', '--start-date', '2025'],
  ['query', '--instrument', 'mag', '--retries', 'x'],
  ['query', '--instrument', 'mag', '--retries', '21'],
  ['query', '--instrument', 'mag', '--timeout', '0'],
  ['query', '--instrument', 'mag', '--timeout', ''],
  ['query', '--instrument', 'mag', '--url', 'ftp://example.org'],
  ['query', '--instrument', 'mag', '--url', 'not a url'],
  ['download'],
  ['download', '--concurrency', '0', 'x'],
  ['download', '--connections', '0', 'x'],
  ['download', '--connections', 'many', 'x'],
  ['download', '--part-size', '0', 'x'],
  ['download', '--part-size', '2000', 'x'],
  ['download', 'not-a-file-name.txt'],
  ['download', '--data-dir', '', 'x'],
  ['sync'],
  ['sync', '--watch', 'soon', '--instrument', 'mag'],
  ['upload'],
  ['upload', 'missing-file.cdf'],
  ['coverage'],
  ['status'],
  ['verify', '--not-verified-since', 'yesterday'],
  ['serve', '--port', 'x'],
  ['serve', '--wire', 'nope'],
  ['serve', '--store', 's3://'],
  ['serve', '--index', 'mysql://x'],
  ['serve', '--tls-cert', 'a.pem'],
  ['serve', '--drain-timeout', '0'],
  ['completion', 'powershell'],
  ['config', 'get', 'nope'],
  ['config', 'get'],
  ['config', 'set', 'retries', '99'],
  ['config', 'set', 'timeout', 'x'],
  ['config', 'set', 'url', 'ftp://x'],
  ['config', 'set', 'token', 'a b'],
  ['config', 'unset', 'nope'],
];
for (const args of wrong) run(args);
run(['query', '--instrument', 'mag'], { env: { MISSION_DATA_RETRIES: 'abc' } });
run(['query', '--instrument', 'mag'], { env: { MISSION_DATA_TIMEOUT: '0' } });
run(['query', '--instrument', 'mag'], { env: { MISSION_DATA_ACCESS_URL: 'gopher://x' } });

// The configuration: listed, set, read back, a malformed file and an unknown key.
run(['config', 'list']);
run(['config', 'set', 'retries', '5']);
run(['config', 'set', 'data-dir', 'relative/data']);
run(['config', 'get', 'retries']);
run(['config', 'get', 'timeout']);
run(['config', 'get', 'api-key']);
run(['config', 'list'], { env: { MISSION_DATA_TIMEOUT: '12', MISSION_API_KEY: 'secret-key-1234' } });
run(['config', 'unset', 'retries']);
run(['config', 'unset', 'retries']);
const configFile = join(home, 'config', 'mission-data', 'config.json');
writeFileSync(configFile, '{"url": "http://127.0.0.1:1", "colour": "blue"}\n');
run(['config', 'list'], { title: 'config list (an unknown key in the file)' });
writeFileSync(configFile, '{"retries": "many"}\n');
run(['config', 'list'], { title: 'config list (a malformed file)' });
writeFileSync(configFile, '{not json');
run(['config', 'list'], { title: 'config list (a file that is not JSON)' });
rmSync(configFile);

// Machine-read output against a demo server.
const store = join(work, 'store');
const server = spawn(process.execPath, [BIN, 'serve', '--demo', '--port', '0', '--store', store, '--quiet'], {
  env: environment(),
  stdio: ['ignore', 'pipe', 'pipe'],
});
port = await new Promise((resolvePort, reject) => {
  let text = '';
  const look = (chunk) => {
    text += chunk;
    const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
    if (match) resolvePort(match[1]);
  };
  server.stdout.on('data', look);
  server.stderr.on('data', look);
  server.on('exit', () => reject(new Error(`the server stopped: ${text}`)));
});
try {
  const url = `http://127.0.0.1:${port}`;
  const data = join(work, 'data');
  const client = (args, options) => run([...args, '--url', url, '--data-dir', data], options);
  client(['query', '--instrument', 'mag', '--output-format', 'json']);
  client(['query', '--instrument', 'mag', '--output-format', 'csv']);
  client(['query', '--instrument', 'mag', '--data-level', 'l1a']);
  client(['query', '--instrument', 'nosuch']);
  client(['download', '--instrument', 'mag', '--data-level', 'l1a', '--dry-run']);
  client(['download', '--instrument', 'mag', '--data-level', 'l1a', '--dry-run', '--output-format', 'json']);
  client(['download', '--instrument', 'mag', '--data-level', 'l1a', '--quiet']);
  client(['download', '--instrument', 'mag', '--data-level', 'l1a', '--output-format', 'json']);
  client(['status', '--instrument', 'mag', '--output-format', 'json']);
  client(['status', '--instrument', 'mag']);
  client(['coverage', '--instrument', 'mag', '--data-level', 'l1a', '--output-format', 'json']);
  client(['coverage', '--instrument', 'mag', '--data-level', 'l1a', '--output-format', 'csv']);
  client(['verify', '--instrument', 'mag', '--output-format', 'json']);
  client(['sync', '--instrument', 'swe', '--dry-run']);
  client(['sync', '--instrument', 'swe', '--output-format', 'json']);
  client(['sync', '--instrument', 'swe', '--output-format', 'json']);
  client(['upload', '--dry-run', 'nothing-here.cdf']);
  client(['download', 'imap_mag_l1a_norm-mago_20990101_20990101_v01-00.cdf']);
} finally {
  server.kill('SIGTERM');
  await new Promise((done) => server.once('exit', done));
  rmSync(work, { recursive: true, force: true });
}

process.stdout.write(`${sections.join('\n')}`);
