/**
 * `query` on the command line against today's archive: the flags of today's filters (declared from the one
 * vocabulary, their help readable), the filters of another table refused as usage errors (exit 2) before any
 * request, and a run against a small service answering `/query` and `/spice-query` as today's does.
 */

import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { makeTempDir } from '../server/helpers.js';

/** A stream that keeps what is written to it. */
function sink(): PassThrough & { text: () => string } {
  const stream = new PassThrough() as PassThrough & { text: () => string };
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.text = () => Buffer.concat(chunks).toString('utf8');
  return stream;
}

/** Runs the command line on `args`, as `main` does, and gives its exit status and output. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const io: CommandIO = { stdout, stderr, stdin: new PassThrough(), signal: new AbortController().signal };
  let work: (() => Promise<number | undefined>) | undefined;
  let status = 0;
  try {
    await buildProgram(io, (next) => {
      work = next;
    }).parseAsync(['node', 'mission-data', ...args]);
    status = work ? ((await work()) ?? 0) : 0;
  } catch (error) {
    const failure = error as { exitCode?: number; message: string; hint?: string };
    stderr.write(`Error: ${failure.message}\n${failure.hint ? `Hint: ${failure.hint}\n` : ''}`);
    status = failure.exitCode ?? 1;
  }
  await new Promise((done) => setImmediate(done));
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

const SCIENCE = [
  {
    file_path: 'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf',
    instrument: 'hi',
    data_level: 'l3a',
    descriptor: 'ena-45',
    start_date: '20250105',
    repointing: 42,
    cr: null,
    version: 'v001.0002',
    major_version: 1,
    minor_version: 2,
    extension: 'cdf',
    ingestion_date: '2025-01-06 00:00:00',
  },
];
const SPICE = [
  {
    file_name: 'naif0012.tls',
    kernel_type: 'leapseconds',
    min_date_datetime: null,
    max_date_datetime: null,
    ingestion_date: '2025-01-02 03:04:05',
    version: '0012',
  },
];

let home: string;
let server: Server;
let url: string;
const seen: string[] = [];

beforeAll(async () => {
  home = await makeTempDir('mission-query-cli-');
  vi.stubEnv('MISSION_DATA_CONFIG', join(home, 'none.json'));
  for (const name of ['MISSION_DATA_ACCESS_URL', 'MISSION_API_KEY', 'MISSION_ACCESS_TOKEN']) {
    vi.stubEnv(name, '');
  }
  server = createServer((request, response) => {
    const address = new URL(request.url ?? '/', 'http://localhost');
    seen.push(`${address.pathname}${address.search}`);
    const body =
      address.pathname === '/spice-query' ? SPICE : address.pathname === '/query' ? SCIENCE : undefined;
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body ?? { message: 'Not Found' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await new Promise((done) => server.close(done));
  await rm(home, { recursive: true, force: true });
});

describe('query --help', () => {
  it("lists today's filters, declared from the vocabulary, with readable help", async () => {
    const { status, stdout } = await run(['query', '--help']);
    expect(status).toBe(0);
    for (const flag of [
      '--table <table>',
      '--repointing <number>',
      '--major-version <number>',
      '--minor-version <number>',
      '--version <version>',
      '--type <type>',
    ]) {
      expect(stdout).toContain(flag);
    }
    // Help wraps at the terminal's width, with the description's column indented: compare the words.
    const words = stdout.replace(/\s+/g, ' ');
    expect(words).toContain(
      "--repointing <number> repointing number of today's science files: 42, 00042 or repoint00042",
    );
    expect(words).toContain("--version <version> file version vNNN.NNNN, vNNN or vXX-YY, or 'latest'");
    expect(words).toContain('--type <type> SPICE kernel type (with --table spice), e.g. leapseconds');
    expect(words).toMatch(/--table <table> table to search \(choices: "science", "ancillary", "spice"/);
  });
});

describe('filters of another table', () => {
  it.each([
    [
      ['--table', 'spice', '--instrument', 'mag'],
      /--instrument does not apply to --table spice: it filters the science and ancillary tables\./,
    ],
    [
      ['--instrument', 'mag', '--type', 'leapseconds'],
      /--type does not apply to --table science: it filters the spice table\.\nHint: SPICE kernels are searched with --table spice/,
    ],
    [
      ['--table', 'ancillary', '--instrument', 'mag', '--repointing', '42'],
      /--repointing does not apply to --table ancillary: it filters the science table\./,
    ],
  ])('query %j is a usage error before any request', async (args, message) => {
    const before = seen.length;
    const { status, stderr } = await run(['query', '--url', url, ...args]);
    expect(status).toBe(2);
    expect(stderr).toMatch(message);
    expect(seen.length).toBe(before);
  });

  it('a value of neither vocabulary is a usage error too', async () => {
    const { status, stderr } = await run(['query', '--url', url, '--instrument', 'hi-46']);
    expect(status).toBe(2);
    expect(stderr).toMatch(/Invalid instrument\. Please choose from .*hi-45.*\bhi\b.*Did you mean hi-45/);
  });
});

describe("query against today's service", () => {
  it("sends today's words and numbers, and shows the Repointing column without the newer-forms warning", async () => {
    const { status, stdout, stderr } = await run([
      'query',
      '--url',
      url,
      '--instrument',
      'hi',
      '--data-level',
      'l3a',
      '--repointing',
      'repoint00042',
      '--version',
      'v001.0002',
    ]);
    expect(stderr).not.toMatch(/Warning/);
    expect(status).toBe(0);
    expect(seen.at(-1)).toBe(
      '/query?instrument=hi&data_level=l3a&version=v001.0002&repointing=42&offset=0&limit=10000',
    );
    expect(stdout.split('\n')[0]).toMatch(/Start Date\s+Repointing\s+Version/);
    expect(stdout).toMatch(/20250105\s+42\s+v001\.0002/);
  });

  it('lists SPICE kernels of a type, the newest asked with latest=true, as CSV with their storage path', async () => {
    const { status, stdout } = await run([
      'query',
      '--url',
      url,
      '--table',
      'spice',
      '--type',
      'leapseconds',
      '--version',
      'latest',
      '--output-format',
      'csv',
    ]);
    expect(status).toBe(0);
    expect(seen.at(-1)).toBe('/spice-query?type=leapseconds&latest=true&offset=0&limit=10000');
    expect(stdout).toBe(
      'file_name,kernel_type,min_date_datetime,max_date_datetime,version,ingestion_date,file_path\n' +
        'naif0012.tls,leapseconds,,,0012,2025-01-02 03:04:05,imap/spice/lsk/naif0012.tls\n',
    );
  });
});
