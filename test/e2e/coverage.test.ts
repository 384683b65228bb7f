/**
 * `coverage` end to end, on a generated year of daily files (365 days at three levels, known gaps and version
 * bumps: scripts/year-archive.js) and on the demo archive: the days and gaps it reports, the calendar's 80
 * columns, the CSV and JSON records, the HTML page's SVG cells, the marks of local copies, the library call and
 * shell completion; and the calendar on a terminal narrower than 80 columns.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import {
  type ReferenceServer,
  type RequestLogEntry,
  startReferenceServer,
  writeDemoArchive,
} from '../../src/server/index.js';
import {
  assertBuilt,
  BIN,
  bytesFor,
  cleanEnv,
  cleanup,
  finished,
  ON_BACKENDS,
  putFile,
  ROOT,
  runCli,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';
import { linuxOnly, unixOnly } from '../helpers/platform.js';
import { screenText } from '../helpers/screen.js';
import { elementsNamed, svgsOf } from '../helpers/svg.js';

const BASH = unixOnly('bash');
const SCRIPT = linuxOnly("util-linux's script");

const exec = promisify(execFile);

/** The gaps scripts/year-archive.js writes, stated here on their own. */
const GAPS: Record<string, Array<[string, string]>> = {
  l1a: [
    ['20250210', '20250212'],
    ['20250704', '20250704'],
  ],
  l1b: [
    ['20250101', '20250101'],
    ['20250520', '20250529'],
    ['20251231', '20251231'],
  ],
  l2: [
    ['20250301', '20250331'],
    ['20251115', '20251116'],
  ],
};
/** The latest version of each reprocessed day; every other day is at v01-00. */
const LATEST: Record<string, Record<string, string>> = {
  l1a: { '20250105': 'v01-01', '20250601': 'v02-00' },
  l1b: { '20250301': 'v01-01' },
  l2: { '20251225': 'v01-01' },
};
const YEAR = ['--instrument', 'mag', '--start-date', '20250101', '--end-date', '20251231'];

/** Every YYYYMMDD from `first` to `last`. */
function datesBetween(first: string, last: string): string[] {
  const dates: string[] = [];
  const day = new Date(`${first.slice(0, 4)}-${first.slice(4, 6)}-${first.slice(6)}T00:00:00Z`);
  for (;;) {
    const date = day.toISOString().slice(0, 10).replaceAll('-', '');
    if (date > last) return dates;
    dates.push(date);
    day.setUTCDate(day.getUTCDate() + 1);
  }
}

interface Row {
  instrument: string;
  data_level: string | null;
  descriptor: string;
  date: string;
  state: string;
  version: string | null;
  file_path: string | null;
  local_version: string | null;
}

let server: ReferenceServer;
const requests: RequestLogEntry[] = [];
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-year-store-');
  await exec(process.execPath, [join(ROOT, 'scripts/year-archive.js'), store]);
  server = await startReferenceServer({ store, port: 0, log: (entry) => requests.push(entry) });
  home = await tempDir('mission-coverage-home-');
});
afterAll(async () => {
  await server?.close();
  await cleanup(store);
  await cleanup(home);
});

const cli = (args: string[], dataDir = join(home, 'data')) =>
  runCli(['coverage', '--url', server.url, '--data-dir', dataDir, ...args], { cwd: home });

describe('coverage of a year of daily files at three levels', () => {
  it('reports exactly the known gaps, and the latest version of every day', async () => {
    const run = await cli([...YEAR, '--output-format', 'json']);
    // Nothing was downloaded here yet: one line says so, and the calendar is the archive's.
    expect(run.stderr).toBe(
      `The data root ${join(home, 'data')} does not exist yet: nothing is held there.\n`,
    );
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as Row[];
    expect(rows).toHaveLength(3 * 365);
    for (const level of ['l1a', 'l1b', 'l2']) {
      const days = rows.filter((row) => row.data_level === level);
      expect(days.map((row) => row.date)).toEqual(datesBetween('20250101', '20251231'));
      const missing = days.filter((row) => row.state === 'missing').map((row) => row.date);
      expect(missing).toEqual(GAPS[level]?.flatMap(([first, last]) => datesBetween(first, last)));
      for (const row of days.filter((day) => day.state !== 'missing')) {
        const version = LATEST[level]?.[row.date] ?? 'v01-00';
        expect(row).toMatchObject({ state: 'archive', version, local_version: null });
        expect(row.file_path).toBe(
          `imap/mag/${level}/2025/${row.date.slice(4, 6)}/imap_mag_${level}_norm_${row.date}_${row.date}_${version}.cdf`,
        );
      }
    }
  });

  it('asks the archive once, for the latest versions, whatever the number of days', async () => {
    const before = requests.length;
    const client = createClient({ url: server.url, dataDir: join(home, 'data') });
    try {
      const report = await client.coverage({ instrument: 'mag', startDate: '20250101', endDate: '20251231' });
      expect(report.products.map((product) => [product.dataLevel, product.present, product.gaps])).toEqual(
        ['l1a', 'l1b', 'l2'].map((level) => {
          const gaps = (GAPS[level] ?? []).map(([start, end]) => ({
            start,
            end,
            days: datesBetween(start, end).length,
          }));
          return [level, 365 - gaps.reduce((sum, gap) => sum + gap.days, 0), gaps];
        }),
      );
    } finally {
      await client.close();
    }
    const asked = requests.slice(before).map((entry) => entry.path);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^\/query\?.*version=latest/);
  });

  it('draws a calendar of at most 80 columns, a row per month, a mark per day, and lists the gaps', async () => {
    const run = await cli(YEAR);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    const block = (level: string) => {
      const start = lines.findIndex((line) => line.startsWith(`mag ${level} norm:`));
      return lines.slice(start, start + 16);
    };
    const l1a = block('l1a');
    expect(l1a[0]).toBe('mag l1a norm: 361 of 365 days, 4 missing in 2 gaps');
    const rows = l1a.filter((line) => /^2025-\d\d /.test(line));
    expect(rows).toHaveLength(12);
    // The marks of February: days 10 to 12 missing, 28 days in all, then the count.
    const february = rows[1] ?? '';
    const marks = february
      .slice(9, 9 + 28 * 2)
      .split(' ')
      .slice(0, 28);
    expect(marks.map((mark, index) => (mark === '.' ? index + 1 : 0)).filter(Boolean)).toEqual([10, 11, 12]);
    expect(february.trimEnd().endsWith('25/28')).toBe(true);
    expect(l1a).toContain('gaps: 2025-02-10 to 2025-02-12 (3 days), 2025-07-04');
    expect(block('l2')).toContain(
      'gaps: 2025-03-01 to 2025-03-31 (31 days), 2025-11-15 to 2025-11-16 (2 days)',
    );
    expect(run.stdout).toContain('. no file');
  });

  it('prints one CSV record per product and day', async () => {
    const run = await cli([...YEAR, '--data-level', 'l2', '--output-format', 'csv']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('instrument,data_level,descriptor,date,state,version,file_path,local_version');
    expect(lines).toHaveLength(1 + 365);
    expect(lines).toContain('mag,l2,norm,20250301,missing,,,');
    expect(lines).toContain(
      'mag,l2,norm,20251225,archive,v01-01,imap/mag/l2/2025/12/imap_mag_l2_norm_20251225_20251225_v01-01.cdf,',
    );
  });

  it('writes a self-contained HTML page whose SVG calendars hold a cell per day, in its state', async () => {
    const page = join(home, 'coverage.html');
    const run = await cli([...YEAR, '--html', page, '--quiet']);
    expect(run.code).toBe(0);
    const html = await readFile(page, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // Nothing is fetched to show it: no script, no stylesheet link, no image, no address but the SVG namespace
    // and the archive's, named as text.
    expect(html).not.toMatch(/<script|<link|<img|url\(|@import/i);
    expect(html.match(/https?:\/\/[^"<]*/g) ?? []).toEqual([
      server.url,
      ...Array(3).fill('http://www.w3.org/2000/svg'),
    ]);
    // It says what it shows: the archive, the data root and when it was made; each product's name once.
    expect(html).toContain(`<dt>Archive</dt><dd>${server.url}</dd>`);
    expect(html).toContain(`<dt>Data root</dt><dd>${join(home, 'data')}</dd>`);
    expect(html).toMatch(/<dt>Made<\/dt><dd>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/dd>/);
    expect(html.split('mag l1a norm').length - 1).toBe(2);
    const calendars = svgsOf(html).filter((svg) => svg.attributes.class === 'calendar');
    expect(calendars).toHaveLength(3);
    for (const [index, level] of ['l1a', 'l1b', 'l2'].entries()) {
      const cells = elementsNamed(calendars[index] as never, 'rect');
      expect(cells.map((cell) => cell.attributes['data-date'])).toEqual(datesBetween('20250101', '20251231'));
      const missing = cells.filter((cell) => cell.attributes['data-state'] === 'missing');
      expect(missing.map((cell) => cell.attributes['data-date'])).toEqual(
        GAPS[level]?.flatMap(([first, last]) => datesBetween(first, last)),
      );
      // A cell per day: one column per day of the month, one row per month, each with its tooltip.
      const june1 = cells.find((cell) => cell.attributes['data-date'] === '20250601');
      const june2 = cells.find((cell) => cell.attributes['data-date'] === '20250602');
      const july1 = cells.find((cell) => cell.attributes['data-date'] === '20250701');
      expect(Number(june2?.attributes.x) - Number(june1?.attributes.x)).toBeGreaterThan(0);
      expect(june1?.attributes.y).toBe(june2?.attributes.y);
      expect(july1?.attributes.x).toBe(june1?.attributes.x);
      expect(Number(july1?.attributes.y)).toBeGreaterThan(Number(june1?.attributes.y));
      const title = elementsNamed(june1 as never, 'title')[0]?.text;
      expect(title).toContain('2025-06-01');
      if (level === 'l1a') expect(title).toContain('imap_mag_l1a_norm_20250601_20250601_v02-00.cdf');
    }
  });

  it('marks days held here at the latest version, and days held here at an older one', async () => {
    const dataDir = await tempDir('mission-coverage-data-');
    try {
      await putFile(dataDir, 'imap_mag_l1a_norm_20250104_20250104_v01-00.cdf', 'here');
      await putFile(dataDir, 'imap_mag_l1a_norm_20250105_20250105_v01-00.cdf', 'older');
      const run = await cli(
        ['--instrument', 'mag', '--data-level', 'l1a', '--start-date', '20250101', '--end-date', '20250131'],
        dataDir,
      );
      expect(run.code).toBe(0);
      const row = run.stdout.split('\n').find((line) => line.startsWith('2025-01 ')) ?? '';
      expect(
        row
          .slice(9, 9 + 5 * 2)
          .split(' ')
          .slice(0, 5),
      ).toEqual(['#', '#', '#', '@', '^']);
      const json = await cli(
        ['--instrument', 'mag', '--data-level', 'l1a', '--start-date', '20250104', '--end-date', '20250105'],
        dataDir,
      );
      expect(json.code).toBe(0);
      const csv = await cli(
        [
          ...[
            '--instrument',
            'mag',
            '--data-level',
            'l1a',
            '--start-date',
            '20250104',
            '--end-date',
            '20250105',
          ],
          '--output-format',
          'json',
        ],
        dataDir,
      );
      expect(
        (JSON.parse(csv.stdout) as Row[]).map((day) => [day.date, day.state, day.version, day.local_version]),
      ).toEqual([
        ['20250104', 'local', 'v01-00', 'v01-00'],
        ['20250105', 'outdated', 'v01-01', 'v01-00'],
      ]);
    } finally {
      await cleanup(dataDir);
    }
  });
});

describe('coverage of the demo archive', () => {
  let demo: TestServer;
  beforeAll(async () => {
    const demoStore = await tempDir('mission-demo-store-');
    await writeDemoArchive(demoStore);
    demo = await startServer({ storeDir: demoStore });
    Object.assign(demo, { demoStore });
  });
  afterAll(async () => {
    await demo?.stop();
    await cleanup((demo as unknown as { demoStore?: string } | undefined)?.demoStore);
  });

  it('finds the weekly files of each product, their reprocessed versions and the six-day gaps between them', async () => {
    const run = await runCli(
      [
        'coverage',
        '--url',
        demo.url,
        '--instrument',
        'mag',
        '--data-level',
        'l1a',
        '--output-format',
        'json',
      ],
      { cwd: home },
    );
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as Row[];
    const norm = rows.filter((row) => row.descriptor === 'norm-mago');
    const burst = rows.filter((row) => row.descriptor === 'burst-magi');
    expect(norm).toHaveLength(57); // 2025-01-01 to 2025-02-26
    const weekly = [
      '20250101',
      '20250108',
      '20250115',
      '20250122',
      '20250129',
      '20250205',
      '20250212',
      '20250219',
      '20250226',
    ];
    for (const product of [norm, burst]) {
      expect(product.filter((row) => row.state !== 'missing').map((row) => row.date)).toEqual(weekly);
    }
    // The demo's most reprocessed file: four versions of its first day, the latest reported.
    expect(norm[0]).toMatchObject({ date: '20250101', version: 'v02-00' });
    const text = await runCli(['coverage', '--url', demo.url, '--instrument', 'mag', '--data-level', 'l1a'], {
      cwd: home,
    });
    expect(text.stdout).toContain('mag l1a norm-mago: 9 of 57 days, 48 missing in 8 gaps');
  });

  it('refuses a call without filters as query does, before any request', async () => {
    const run = await runCli(['coverage', '--url', demo.url], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Give at least one filter');
    expect(run.stdout).toBe('');
  });
});

describe.skipIf(BASH.missing)(BASH.title('completion of coverage and status'), () => {
  it('completes the new commands and their output formats in bash', async () => {
    const { stdout: script } = await exec(process.execPath, [
      join(ROOT, 'bin/mission-data.js'),
      'completion',
      'bash',
    ]);
    const file = join(home, 'completion.bash');
    await writeFile(file, script);
    const complete = async (words: string[]) => {
      const quoted = words.map((word) => `'${word}'`).join(' ');
      const { stdout } = await exec('bash', [
        '-c',
        `source "$1"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _mission_data; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'bash',
        file,
      ]);
      return stdout.split('\n').filter(Boolean);
    };
    expect(await complete(['mission-data', 'co'])).toEqual(expect.arrayContaining(['coverage']));
    expect(await complete(['mission-data', 'st'])).toEqual(['status']);
    expect(await complete(['mission-data', 'coverage', '--output-format', ''])).toEqual([
      'calendar',
      'json',
      'csv',
    ]);
    expect(await complete(['mission-data', 'status', '--output-format', ''])).toEqual(['text', 'json']);
    expect(await complete(['mission-data', 'download', '--up'])).toEqual(['--update']);
    expect(await complete(['mission-data', 'coverage', '--ht'])).toEqual(['--html']);
  });
});

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');

describe.skipIf(ON_BACKENDS)('the coverage calendar on a narrow terminal', () => {
  const MONTHS = [
    'imap/mag/l2/2025/01/imap_mag_l2_norm_20250101_20250101_v01-00.cdf',
    'imap/mag/l2/2025/01/imap_mag_l2_norm_20250131_20250131_v01-00.cdf',
    'imap/mag/l2/2025/02/imap_mag_l2_norm_20250201_20250201_v01-00.cdf',
  ];
  let narrowStore: string;
  let narrowHome: string;
  let narrow: ReferenceServer;
  beforeAll(async () => {
    narrowStore = await tempDir('mission-store-');
    narrowHome = await tempDir();
    for (const path of MONTHS) await putFile(narrowStore, path, bytesFor(path, 1000));
    narrow = await startReferenceServer({
      store: narrowStore,
      port: 0,
      secret: 'coverage-secret-0123456789',
    });
  });
  afterAll(async () => {
    await narrow?.close();
    await cleanup(narrowStore);
    await cleanup(narrowHome);
  });

  it.runIf(HAS_SCRIPT && !SCRIPT.missing).each([80, 60, 50])(
    SCRIPT.title('fits %i columns without a wrapped row'),
    async (columns) => {
      const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
      const args = [
        'coverage',
        '--url',
        narrow.url,
        '--data-dir',
        'data',
        '--instrument',
        'mag',
        '--data-level',
        'l2',
      ];
      const command = `stty cols ${columns} rows 50; exec ${[process.execPath, BIN, ...args, '--start-date', '20250101', '--end-date', '20250228'].map(quote).join(' ')}`;
      // The server answers from this process: the run is awaited, never waited for synchronously.
      const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
        cwd: narrowHome,
        env: cleanEnv(narrowHome, { TERM: 'xterm' }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      child.stdin?.end();
      const run = await finished(child, 30_000);
      expect(run.code).toBe(0);
      const screen = screenText(run.stdout, columns);
      for (const line of screen) expect(line.length).toBeLessThanOrEqual(columns);
      const january = screen.find((line) => line.startsWith('2025-01'));
      const february = screen.find((line) => line.startsWith('2025-02'));
      // A row per month, each ending with its count (a wrapped row would leave the count on a line of its own).
      expect(january).toMatch(/ \d+\/31$/);
      expect(february).toMatch(/ \d+\/28$/);
      expect(screen.filter((line) => /^\s*\d+\/\d+$/.test(line))).toEqual([]);
    },
  );
});
