import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WIRE_MODES } from '../../src/server/wire.js';
import {
  assertBuilt,
  cleanup,
  ON_BACKENDS,
  putFile,
  runCli,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const INGESTED = new Date('2025-02-03T04:05:06Z');
const FILES = [
  'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
  'imap_mag_l1a_norm-mago_20250101_20250101_v01-01.cdf',
  'imap_mag_l1b_norm-mago_20250102_20250102_v01-00.cdf',
  'imap_swe_l0_raw_20250101_20250101_v01-00.pkts',
];
const pathOf = (name: string) => {
  const [, instrument, level, , start] = name.split('_') as [string, string, string, string, string];
  return `imap/${instrument}/${level}/${start.slice(0, 4)}/${start.slice(4, 6)}/${name}`;
};
const recordOf = (name: string) => {
  const [, instrument, level, descriptor, start, end, rest] = name.split('_') as string[];
  const [version, extension] = (rest as string).split('.') as [string, string];
  return {
    file_path: pathOf(name),
    instrument,
    data_level: level,
    descriptor,
    start_date: start,
    end_date: end,
    version,
    extension,
    ingestion_date: '2025-02-03 04:05:06',
  };
};
/**
 * The output with its ingestion dates as the store folder's mtimes give them. A bucket dates an object when
 * it was put there, which these tests cannot set: on the backends, any date stands for the one expected.
 */
const dated = (output: string) =>
  ON_BACKENDS ? output.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, '2025-02-03 04:05:06') : output;
const CSV_HEADER =
  'file_path,instrument,data_level,descriptor,start_date,end_date,version,extension,ingestion_date';

let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-query-store-');
  for (const name of FILES) await putFile(store, name, `contents of ${name}`, INGESTED);
});
afterAll(async () => {
  await cleanup(store);
});
beforeEach(async () => {
  home = await tempDir('mission-query-home-');
});
afterEach(async () => {
  await cleanup(home);
});

describe.each(WIRE_MODES)('query against the reference server, wire %s', (wire) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ wire, storeDir: store });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('prints a table on stdout and the count line on stderr by default; -q leaves the count out', async () => {
    const args = ['query', '--url', server.url, '--instrument', 'mag', '--data-level', 'l1a'];
    const [run, quiet] = await Promise.all([
      runCli(args, { cwd: home }),
      runCli([...args, '-q'], { cwd: home }),
    ]);
    expect(run.stderr).toBe('Found [2] matching files\n');
    expect(run.code).toBe(0);
    const lines = dated(run.stdout).split('\n');
    // Into a pipe: every column in full, a rule under the headings only, one line per record.
    expect(lines[0]).toMatch(
      /^Instrument +Data Level +Descriptor +Start Date +End Date +Version +Ingestion Date +Filename$/,
    );
    expect(lines[1]).toMatch(/^-+( +-+){7}$/);
    expect(lines[2]).toMatch(
      /^mag +l1a +norm-mago +20250101 +20250101 +v01-00 +2025-02-03 04:05:06 +imap_mag_l1a_norm-mago_20250101_20250101_v01-00\.cdf$/,
    );
    expect(lines[3]).toContain(' v01-01 ');
    expect(lines).toHaveLength(5);
    expect(run.stdout).not.toContain('\u001b[');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(run.stdout);
  });

  it('prints the records as a JSON array with --output-format json', async () => {
    const run = await runCli(
      ['query', '--url', server.url, '--instrument', 'mag', '--version', 'latest', '--output-format', 'json'],
      { cwd: home },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(dated(run.stdout))).toEqual([
      recordOf(FILES[1] as string),
      recordOf(FILES[2] as string),
    ]);
  });

  it('prints RFC 4180 CSV with a header with --output-format csv', async () => {
    const run = await runCli(
      [
        'query',
        '--url',
        server.url,
        '--start-date',
        '20250101',
        '--end-date',
        '20250101',
        '--output-format',
        'csv',
      ],
      { cwd: home },
    );
    expect(run.code).toBe(0);
    const expected = [FILES[0], FILES[1], FILES[3]].map((name) => {
      const record = recordOf(name as string);
      return Object.values(record).join(',');
    });
    expect(dated(run.stdout)).toBe(`${[CSV_HEADER, ...expected].join('\n')}\n`);
  });

  it('says when nothing matches, in each format', async () => {
    const args = ['query', '--url', server.url, '--instrument', 'hit'];
    const [table, json, csv] = await Promise.all([
      runCli(args, { cwd: home }),
      runCli([...args, '--output-format', 'json'], { cwd: home }),
      runCli([...args, '--output-format', 'csv'], { cwd: home }),
    ]);
    expect([table.code, json.code, csv.code]).toEqual([0, 0, 0]);
    expect(table.stdout).toBe('');
    expect(table.stderr).toBe('Found [0] matching files\n');
    expect(json.stdout).toBe('[]\n');
    expect(csv.stdout).toBe(`${CSV_HEADER}\n`);
  });

  it('finds one file by its storage path', async () => {
    const run = await runCli(
      ['query', '--url', server.url, '--file-path', pathOf(FILES[2] as string), '--output-format', 'json'],
      { cwd: home },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(dated(run.stdout))).toEqual([recordOf(FILES[2] as string)]);
  });
});

describe('query settings and failures', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ storeDir: store });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('exits 2 with every bad value named, before any request', async () => {
    const run = await runCli(
      [
        'query',
        '--url',
        'http://127.0.0.1:9',
        '--instrument',
        'magx',
        '--start-date',
        '20250230',
        '--version',
        'v1',
      ],
      { cwd: home },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Invalid instrument. Please choose from ultra-45, codice');
    expect(run.stderr).toContain(
      'Invalid start_date "20250230": 20250230 is not a date of the calendar (February has 28 days in 2025).',
    );
    // The client takes versions of both generations, and says so.
    expect(run.stderr).toContain(
      'Invalid version "v1". Please use vNNN.NNNN, vNNN or vxx-xx format, or latest.',
    );
    // Port 9 has nothing listening: a request would have ended in a connection error instead.
    expect(run.stderr).not.toContain('connection refused');
  });

  it('exits 2 and lists the filters when none is given', async () => {
    const run = await runCli(['query', '--url', server.url, '--output-format', 'json'], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Give at least one filter: --instrument, --data-level, --descriptor');
    expect(run.stderr).toContain('--file-path');
  });

  it('exits 2 on an unknown output format', async () => {
    const run = await runCli(
      ['query', '--url', server.url, '--instrument', 'mag', '--output-format', 'xml'],
      {
        cwd: home,
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('xml');
  });

  it('exits 1 on a refused connection, naming the URL in use and how to change it', async () => {
    const port = await closedPort();
    const run = await runCli(['query', '--instrument', 'mag'], {
      cwd: home,
      env: { MISSION_DATA_ACCESS_URL: `http://127.0.0.1:${port}` },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `Error: GET http://127.0.0.1:${port}/query?instrument=mag&offset=0&limit=10000: connection refused (nothing is listening at 127.0.0.1:${port}).`,
    );
    expect(run.stderr).toMatch(
      /Hint: .*http:\/\/127\.0\.0\.1:\d+.*--url.*MISSION_DATA_ACCESS_URL.*config set url/,
    );
  });

  it('takes the URL from MISSION_DATA_ACCESS_URL, then IMAP_DATA_ACCESS_URL; a flag beats both', async () => {
    const port = await closedPort();
    const dead = `http://127.0.0.1:${port}`;
    const args = ['query', '--instrument', 'swe', '--output-format', 'csv'];
    const [imap, both, flag] = await Promise.all([
      runCli(args, { cwd: home, env: { IMAP_DATA_ACCESS_URL: server.url } }),
      runCli(args, { cwd: home, env: { MISSION_DATA_ACCESS_URL: server.url, IMAP_DATA_ACCESS_URL: dead } }),
      runCli([...args, '--url', server.url], { cwd: home, env: { MISSION_DATA_ACCESS_URL: dead } }),
    ]);
    for (const run of [imap, both, flag]) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('imap_swe_l0_raw_20250101_20250101_v01-00.pkts');
    }
  });

  it('takes the URL from the config file', async () => {
    const set = await runCli(['config', 'set', 'url', server.url], { cwd: home });
    expect(set.code).toBe(0);
    const run = await runCli(['query', '--instrument', 'swe', '--output-format', 'json'], { cwd: home });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveLength(1);
  });

  it('exits 1 with the method, URL and status when the service answers an error', async () => {
    const run = await runCli(['query', '--url', `${server.url}/nowhere`, '--instrument', 'mag'], {
      cwd: home,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^Error: GET ${server.url}/nowhere/query\\?instrument=mag&offset=0&limit=10000: 404 `),
    );
  });
});

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}
