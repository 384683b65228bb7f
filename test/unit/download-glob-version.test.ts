/**
 * `download` of a glob or a folder with `--version`: `latest` fetches only the newest version of each product and
 * day the glob matches (as `query --version latest` lists them), a version such as `v01-00` only that version's
 * files; files named one by one carry their version, so `--version` beside them is a usage error. The command
 * line runs in this process against the reference server.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { cleanup, listFiles, putFile, tempDir } from '../helpers/e2e.js';

const SECRET = 'glob-version-secret-0123456789';

/** A name of the specification's (`vXX-YY`, two dates) or of today's archive (`vNNN.NNNN`, one date). */
const name = (day: string, version: string, level = 'l1a') =>
  version.includes('.')
    ? `imap_mag_${level}_norm_202401${day}_${version}.cdf`
    : `imap_mag_${level}_norm_202401${day}_202401${day}_${version}.cdf`;
const path = (day: string, version: string, level = 'l1a') =>
  `imap/mag/${level}/2024/01/${name(day, version, level)}`;

/** The archive: the 1st in two versions, the 2nd in one, the 3rd in three (the newest of today's form). */
const ARCHIVE = [
  path('01', 'v01-00'),
  path('01', 'v01-01'),
  path('02', 'v01-00'),
  path('03', 'v01-00'),
  path('03', 'v02-00'),
  path('03', 'v001.0001'),
  path('01', 'v01-00', 'l1b'),
];
const LATEST = [path('01', 'v01-01'), path('02', 'v01-00'), path('03', 'v001.0001')];

/** A stream that keeps what is written to it. */
function sink(): PassThrough & { text: () => string } {
  const stream = new PassThrough() as PassThrough & { text: () => string };
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.text = () => Buffer.concat(chunks).toString('utf8');
  return stream;
}

let store: string;
let home: string;
let server: ReferenceServer;
let runs = 0;

/** Runs the command line in this process, as `main` does (errors printed and mapped to their exit status). */
async function run(
  args: string[],
): Promise<{ status: number; stdout: string; stderr: string; dataDir: string }> {
  runs += 1;
  const dataDir = `${home}/data-${runs}`;
  const stdout = sink();
  const stderr = sink();
  const io: CommandIO = { stdout, stderr, stdin: new PassThrough(), signal: new AbortController().signal };
  let work: (() => Promise<number | undefined>) | undefined;
  let status: number;
  try {
    await buildProgram(io, (next) => {
      work = next;
    }).parseAsync(['node', 'mission-data', ...args, '--url', server.url, '--data-dir', dataDir, '--quiet']);
    status = work ? ((await work()) ?? 0) : 0;
  } catch (error) {
    const failure = error as { exitCode?: number; message: string; hint?: string };
    stderr.write(`Error: ${failure.message}\n${failure.hint ? `Hint: ${failure.hint}\n` : ''}`);
    status = failure.exitCode ?? 1;
  }
  await new Promise((done) => setImmediate(done));
  return { status, stdout: stdout.text(), stderr: stderr.text(), dataDir };
}

/** The mission files a run put in its data root. */
async function fetched(dataDir: string): Promise<string[]> {
  return (await listFiles(dataDir).catch(() => [])).sort();
}

beforeAll(async () => {
  store = await tempDir('mission-store-');
  home = await tempDir('mission-glob-version-');
  for (const file of ARCHIVE) await putFile(store, file, `bytes of ${file}`);
  server = await startReferenceServer({ store, port: 0, secret: SECRET });
  vi.stubEnv('MISSION_DATA_CONFIG', `${home}/none.json`);
  for (const variable of [
    'MISSION_DATA_ACCESS_URL',
    'MISSION_API_KEY',
    'MISSION_ACCESS_TOKEN',
    'MISSION_DATA_DIR',
  ]) {
    vi.stubEnv(variable, '');
  }
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  await cleanup(store);
  await cleanup(home);
});

describe('download of a glob with --version', () => {
  it('is told by download --help', async () => {
    const help = await run(['download', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      "Beside a glob or a folder, --version selects among the matches: latest fetches only the newest version of each product and day, as query --version latest lists them ('imap/mag/l1a/2024/01/*' --version latest); v01-00, only that version.",
    );
  });

  it('latest: only the newest version of each product and day the glob matches', async () => {
    const latest = await run(['download', 'imap/mag/l1a/2024/01/*', '--version', 'latest']);
    expect(latest.stderr).toBe('');
    expect(latest.status).toBe(0);
    expect(await fetched(latest.dataDir)).toEqual(LATEST);
    // A glob of names, the same.
    const names = await run(['download', 'imap_mag_l1a_norm_2024010[13]_*', '--version', 'latest']);
    expect(names.status).toBe(0);
    expect(await fetched(names.dataDir)).toEqual([path('01', 'v01-01'), path('03', 'v001.0001')]);
  });

  it('without it, every version the glob matches, as before', async () => {
    const every = await run(['download', 'imap/mag/l1a/2024/01/*']);
    expect(every.status).toBe(0);
    expect(await fetched(every.dataDir)).toEqual(ARCHIVE.filter((file) => file.includes('/l1a/')).sort());
  });

  it('a version: only that version of each match', async () => {
    const first = await run(['download', 'imap/mag/l1a/2024/01/*', '--version', 'v01-00']);
    expect(first.status).toBe(0);
    expect(await fetched(first.dataDir)).toEqual([
      path('01', 'v01-00'),
      path('02', 'v01-00'),
      path('03', 'v01-00'),
    ]);
  });

  it('a dry run lists the newest versions alone', async () => {
    const dry = await run(['download', 'imap/mag/l1a/2024/01/*', '--version', 'latest', '--dry-run']);
    expect(dry.status).toBe(0);
    expect(dry.stdout.split('\n').filter((line) => line.startsWith('would download'))).toEqual(
      LATEST.map((file) => `would download ${file}`),
    );
    expect(await fetched(dry.dataDir)).toEqual([]);
  });

  it('a folder with --version latest: the newest of each product and day below it', async () => {
    const folder = await run(['download', 'imap/mag/l1a/2024/01/', '--version', 'latest']);
    expect(folder.status).toBe(0);
    expect(await fetched(folder.dataDir)).toEqual(LATEST);
  });

  it('refuses --version beside a file named one by one, and other query options beside a glob', async () => {
    const named = await run(['download', path('01', 'v01-00'), '--version', 'latest']);
    expect(named.status).toBe(2);
    expect(named.stderr).toContain(
      `Error: --version selects among the matches of a glob or a folder; a file named one by one carries its version in its name (got "${path('01', 'v01-00')}").`,
    );
    const filters = await run([
      'download',
      'imap/mag/l1a/2024/01/*',
      '--version',
      'latest',
      '--data-level',
      'l1a',
    ]);
    expect(filters.status).toBe(2);
    expect(filters.stderr).toContain(
      'Give either file names/paths or query options, not both (got paths and --data-level).',
    );
    expect(await fetched(named.dataDir)).toEqual([]);
  });
});
