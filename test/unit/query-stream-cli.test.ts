/**
 * `query --output-format json|csv` writes each page as the service answers it: the first page is on stdout before
 * the second is asked for, the next page waits while stdout's buffer is full, the text is that of the whole-answer
 * formatters byte for byte, a failure after some pages exits non-zero with the error and a warning that the output
 * is cut short, and a reader that leaves (`| head`) stops the paging.
 */

import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { formatCsv, formatJson } from '../../src/cli/output.js';
import { buildProgram } from '../../src/cli/program.js';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { Sink } from '../helpers/sink.js';
import { makeTempDir } from '../server/helpers.js';

/** mag's record of the `day`th day from 1 January 2025 (1 is that day). */
function mag(day: number): QueryRecord {
  const date = new Date(Date.UTC(2025, 0, day)).toISOString().slice(0, 10).replaceAll('-', '');
  return {
    file_path: `imap/mag/l1a/${date.slice(0, 4)}/${date.slice(4, 6)}/imap_mag_l1a_norm-mago_${date}_${date}_v01-00.cdf`,
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: date,
    end_date: date,
    version: 'v01-00',
    extension: 'cdf',
    ingestion_date: `2025-01-1${day % 10} 00:00:00`,
  };
}

/** Five records of mag, a day each, with what a formatter must keep: nested values, non-ASCII text, CSV quoting. */
const RECORDS: QueryRecord[] = [1, 2, 3, 4, 5].map((day) => ({
  ...mag(day),
  note: day === 3 ? 'a, "quoted"\nline ünï' : null,
  extra: { tags: ['x', day], empty: {}, none: [] },
}));

/** Runs the command line as `main` does and gives its exit status and output; `stdout` may be the test's own. */
async function run(
  args: string[],
  stdout: Writable & { text?: () => string } = new Sink(),
): Promise<{ status: number; stdout: string; stderr: string }> {
  const stderr = new Sink();
  const io: CommandIO = { stdout, stderr, stdin: new PassThrough(), signal: new AbortController().signal };
  let work: (() => Promise<number | undefined>) | undefined;
  let status = 0;
  try {
    await buildProgram(io, (next) => {
      work = next;
    }).parseAsync(['node', 'mission-data', ...args]);
    status = work ? ((await work()) ?? 0) : 0;
  } catch (error) {
    const failure = error as { exitCode?: number; message: string };
    stderr.write(`Error: ${failure.message}\n`);
    status = failure.exitCode ?? 1;
  }
  return { status, stdout: stdout.text?.() ?? '', stderr: stderr.text() };
}

let home: string;
let server: Server;
let url: string;
/** The offset of each page asked for, in order. */
let asked: number[];
/** Called as each page is asked for, before it is answered. */
let onPage: (offset: number) => void;
/** The offset whose page fails with a 500, if any. */
let failAt: number | undefined;
/** The records the service holds. */
let served: QueryRecord[];

beforeAll(async () => {
  home = await makeTempDir('mission-query-stream-');
  vi.stubEnv('MISSION_DATA_CONFIG', join(home, 'none.json'));
  for (const name of ['MISSION_DATA_ACCESS_URL', 'MISSION_API_KEY', 'MISSION_ACCESS_TOKEN']) {
    vi.stubEnv(name, '');
  }
  server = createServer((request, response) => {
    const address = new URL(request.url ?? '/', 'http://localhost');
    const offset = Number(address.searchParams.get('offset') ?? 0);
    const limit = Number(address.searchParams.get('limit') ?? served.length);
    asked.push(offset);
    onPage(offset);
    const failed = offset === failAt;
    response.writeHead(failed ? 500 : 200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify(failed ? { message: 'the index is down' } : served.slice(offset, offset + limit)),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  asked = [];
  onPage = () => undefined;
  failAt = undefined;
  served = RECORDS;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await new Promise((done) => server.close(done));
  await rm(home, { recursive: true, force: true });
});

/** `query` of every record, in pages of two (five records: pages of 2, 2 and 1) unless told, in `format`. */
const queryArgs = (format: string, pageSize = 2) => [
  'query',
  '--url',
  url,
  '--instrument',
  'mag',
  '--page-size',
  String(pageSize),
  '--retries',
  '0',
  '--output-format',
  format,
];

describe('query --output-format json|csv, page by page', () => {
  it.each(['json', 'csv'])('writes the first page (%s) before the second is asked for', async (format) => {
    const stdout = new Sink();
    const seenAtPage = new Map<number, string>();
    onPage = (offset) => seenAtPage.set(offset, stdout.text());
    const { status } = await run(queryArgs(format), stdout);
    expect(status).toBe(0);
    expect(asked).toEqual([0, 2, 4]);
    expect(seenAtPage.get(0)).toBe('');
    const first = RECORDS[0]?.file_path as string;
    const third = RECORDS[2]?.file_path as string;
    expect(seenAtPage.get(2)).toContain(first);
    expect(seenAtPage.get(2)).not.toContain(third);
    expect(seenAtPage.get(4)).toContain(RECORDS[3]?.file_path);
  });

  it('writes, page by page, the text the whole-answer formatters give, byte for byte', async () => {
    const json = await run(queryArgs('json'));
    expect(json.status).toBe(0);
    expect(json.stdout).toBe(formatJson(RECORDS));
    expect(JSON.parse(json.stdout)).toEqual(RECORDS);
    const csv = await run(queryArgs('csv'));
    expect(csv.status).toBe(0);
    expect(csv.stdout).toBe(formatCsv(RECORDS));
    expect(csv.stderr).toBe('');
  });

  it('writes pages of many records, made into text a few hundred at a time, byte for byte', async () => {
    served = Array.from({ length: 1001 }, (_, index) => ({
      ...mag(index + 1),
      note: index % 7 ? null : 'x,"y"',
    }));
    const json = await run(queryArgs('json', 500));
    expect(json.stdout).toBe(formatJson(served));
    expect(asked).toEqual([0, 500, 1000]);
    expect((await run(queryArgs('csv', 500))).stdout).toBe(formatCsv(served));
  });

  it('writes what the formatters give when nothing matched', async () => {
    served = [];
    const json = await run(queryArgs('json'));
    expect(json.status).toBe(0);
    expect(json.stdout).toBe(formatJson([]));
    expect((await run(queryArgs('csv'))).stdout).toBe(formatCsv([]));
    expect(asked).toEqual([0, 0]);
  });

  it('asks for the next page only once stdout has taken the last one', async () => {
    const stdout = new Sink(16);
    stdout.held = [];
    const done = run(queryArgs('json'), stdout);
    await vi.waitFor(() => expect(stdout.chunks.length).toBeGreaterThan(0));
    // Give the command time to ask for more, were it to go on without waiting.
    await new Promise((wait) => setTimeout(wait, 100));
    expect(asked).toEqual([0]);
    stdout.release();
    const { status } = await done;
    expect(status).toBe(0);
    expect(asked).toEqual([0, 2, 4]);
    expect(stdout.text()).toBe(formatJson(RECORDS));
  });
});

describe('CSV whose later pages bring a field the first lacked', () => {
  it('keeps the header of the first page, leaves the field out and names it in a warning', async () => {
    const plain = [1, 2, 3, 4, 5].map(mag);
    served = plain.map((record, index) => (index < 2 ? record : { ...record, quality: 'good' }));
    const { status, stdout, stderr } = await run(queryArgs('csv'));
    expect(status).toBe(0);
    expect(stdout).toBe(formatCsv(plain));
    expect(stderr).toBe(
      'Warning: records after the first page carry fields the CSV header does not name (quality): they are left ' +
        'out; --output-format json writes every field.\n',
    );
  });
});

describe('a failure after some pages', () => {
  it.each([
    ['json', 2],
    ['csv', 2],
  ])('exits non-zero with the error, and says the %s output is cut short', async (format, count) => {
    failAt = 2;
    const { status, stdout, stderr } = await run(queryArgs(format));
    expect(status).not.toBe(0);
    expect(asked).toEqual([0, 2]);
    expect(stderr).toMatch(
      /Error: GET http:\/\/127\.0\.0\.1:\d+\/query\?\S*offset=2&limit=2: 500\b.*the index is down/,
    );
    expect(stderr).toContain(`Warning: the output stops after ${count} records`);
    // The first page was written; the output is the start of the whole answer, and no valid JSON.
    const whole = format === 'json' ? formatJson(RECORDS) : formatCsv(RECORDS);
    expect(stdout.length).toBeGreaterThan(0);
    expect(whole.startsWith(stdout)).toBe(true);
    expect(stdout).toContain(RECORDS[1]?.file_path);
    expect(stdout).not.toContain(RECORDS[2]?.file_path);
    if (format === 'json') expect(() => JSON.parse(stdout)).toThrow();
  });

  it('on the first page writes nothing, and no cut-short warning', async () => {
    failAt = 0;
    const { status, stdout, stderr } = await run(queryArgs('json'));
    expect(status).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).not.toContain('Warning');
  });
});

describe('a reader that leaves', () => {
  it('stops the paging: no page is asked for after stdout failed (EPIPE), and the exit status is 0', async () => {
    const stdout = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    // `main` keeps a listener on stdout for this error; so does this test.
    stdout.on('error', () => undefined);
    const { status } = await run(queryArgs('json'), stdout);
    expect(status).toBe(0);
    expect(asked).toEqual([0]);
  });
});
