// `npm run demo`: starts the reference server in-process on a demo archive, then runs query, download and
// upload against it through the command line, showing each command and its output. Everything lives in a
// temporary folder that is removed at the end.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { startReferenceServer, writeDemoArchive } from '../dist/server/index.js';

const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin/mission-data.js');
const bold = (text) => (process.stdout.isTTY ? `\u001b[1m${text}\u001b[22m` : text);
const dim = (text) => (process.stdout.isTTY ? `\u001b[2m${text}\u001b[22m` : text);

/** Runs `mission-data ...args` in `cwd`, prints the command line and its output, returns its exit status. */
function show(args, { cwd, env, input, expect = 0 }) {
  const quoted = args.map((arg) => (/^[\w./:=@-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ');
  process.stdout.write(
    `\n${bold(`$ ${input === undefined ? '' : 'cat paths.txt | '}mission-data ${quoted}`)}\n`,
  );
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(input ?? '');
    child.stdout.on('data', (chunk) => process.stdout.write(chunk));
    child.stderr.on('data', (chunk) => process.stdout.write(dim(chunk.toString())));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0 || expect !== 0) process.stdout.write(dim(`(exit status ${code})\n`));
      if (code !== expect) fail(new Error(`mission-data ${quoted} exited with ${code}, expected ${expect}.`));
      else done(code);
    });
  });
}

async function listFiles(folder) {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
    .sort();
}

const workspace = await mkdtemp(join(tmpdir(), 'mission-data-demo-'));
const storeDir = join(workspace, 'store');
const cwd = join(workspace, 'work');
let server;
let status = 0;
try {
  const count = await writeDemoArchive(storeDir);
  server = await startReferenceServer({ store: storeDir, port: 0 });
  await mkdir(cwd, { recursive: true });
  process.stdout.write(
    `${bold('mission-data demo')}\nThe reference server runs at ${server.url} with a demo archive of ${count} files.\n` +
      `Commands run in ${cwd}; the data root is ./data.\n`,
  );
  process.stdout.write(`\n${bold(`$ export MISSION_DATA_ACCESS_URL=${server.url}`)}\n`);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: workspace,
    XDG_CONFIG_HOME: join(workspace, 'config'),
    MISSION_DATA_ACCESS_URL: server.url,
  };
  const run = (args, options = {}) => show(args, { cwd, env, ...options });

  await run([
    'query',
    '--instrument',
    'mag',
    '--data-level',
    'l1a',
    '--start-date',
    '20250201',
    '--version',
    'latest',
  ]);
  await run([
    'query',
    '--instrument',
    'swe',
    '--data-level',
    'l2',
    '--end-date',
    '20250110',
    '--output-format',
    'json',
  ]);
  await run(['query', '--table', 'ancillary', '--instrument', 'mag', '--output-format', 'csv']);

  await run([
    'download',
    '--instrument',
    'mag',
    '--data-level',
    'l1a',
    '--start-date',
    '20250201',
    '--version',
    'latest',
  ]);
  await run(['download', '-'], {
    input:
      'imap_swe_l0_raw_20250101_20250101_v01-00.pkts\nimap/hit/l1a/2025/01/imap_hit_l1a_count-rates_20250108_20250108_v01-00.cdf\n',
  });
  await run(['download', 'imap_swe_l0_raw_20250101_20250101_v01-00.pkts']);
  process.stdout.write(
    `\nFiles in ./data now:\n${(await listFiles(join(cwd, 'data'))).map((f) => `  ${f}`).join('\n')}\n`,
  );

  const newFile = 'imap/mag/l2/2025/03/imap_mag_l2_demo_20250301_20250301_v01-00.cdf';
  const local = join(cwd, 'data', newFile);
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, `a new product made on ${new Date().toISOString()}\n`);
  process.stdout.write(
    `\nA new product appears at ./data/${newFile}; upload it from the folder holding ./data:\n`,
  );
  await run(['upload', newFile]);
  await run(['query', '--instrument', 'mag', '--data-level', 'l2', '--descriptor', 'demo']);
  process.stdout.write(
    '\nUploading it again is safe: the store keeps one copy of each version, and finds it holds these very bytes.\n',
  );
  await run(['upload', newFile]);
  process.stdout.write('\nA changed file under the same name is refused (exit status 1):\n');
  await writeFile(local, `a changed product made on ${new Date().toISOString()}\n`);
  await run(['upload', newFile], { expect: 1 });
  process.stdout.write('\nA bad name is caught before any request (exit status 2):\n');
  await run(['download', 'imap_mag_l1a_norm_2025-01-01_v1.cdf'], { expect: 2 });
  process.stdout.write(
    `\n${bold('Demo complete.')} Try it yourself: \`node bin/mission-data.js serve --demo\` in this folder, then, ` +
      `in another terminal, the commands above as \`node ${bin} …\` (or \`npx mission-data …\` in this folder; ` +
      'installed from npm, the command is `mission-data`).\n',
  );
} catch (error) {
  process.stderr.write(`Demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  status = 1;
} finally {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
}
process.exitCode = status;
