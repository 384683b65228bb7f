/**
 * The command line as a person sees it: run under a pseudo-terminal (`script` from util-linux, with the terminal
 * width set by `stty cols`), and judged by the final screen text, after carriage returns and erase codes are
 * applied; and with `CI` set, where nothing may animate.
 */
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  BIN,
  bytesFor,
  type CliRun,
  cleanEnv,
  cleanup,
  finished,
  listFiles,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';
import { screenText } from '../helpers/screen.js';

const SCRIPT = linuxOnly("util-linux's script");

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');

const NAMES = [1, 2, 3, 4, 5].map((day) => scienceName('swe', day));
const pathOf = (name: string) => `imap/swe/l1a/2024/01/${name}`;

function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** Runs the built command line on a pseudo-terminal `columns` wide; output is what the terminal received. */
function runInTerminal(
  args: readonly string[],
  options: { cwd: string; columns: number; env?: Record<string, string> },
): Promise<CliRun> {
  const command = `stty cols ${options.columns} rows 50; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: options.cwd,
    env: cleanEnv(options.cwd, { TERM: 'xterm', ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end();
  return finished(child, 60_000);
}

/** As `runInTerminal`, stopped with SIGINT after `seconds` (for `--watch`). */
function runInTerminalFor(
  seconds: number,
  args: readonly string[],
  options: { cwd: string; columns: number },
): Promise<CliRun> {
  const command = `stty cols ${options.columns} rows 50; exec timeout --preserve-status -s INT ${seconds} ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: options.cwd,
    env: cleanEnv(options.cwd, { TERM: 'xterm' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end();
  return finished(child, 60_000);
}

/** Every state the terminal's last line went through: the text between carriage returns and erase codes. */
function drawnLines(output: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase code is what separates drawn states
  const separators = /\r|\n|\u001b\[2K/;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: other escape codes (ora's cursor codes) draw nothing
  const codes = /\u001b\[[?\d;]*[A-Za-z]/g;
  return output
    .split(separators)
    .map((line) => line.replace(codes, ''))
    .filter((line) => line.length > 0);
}

let server: TestServer;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  for (const [index, name] of NAMES.entries()) await putFile(store, name, bytesFor(name, 200_000 + index));
  server = await startServer({ storeDir: store, apiKeys: ['right-key'] });
});

afterAll(async () => {
  await server?.stop();
  await cleanup(store);
});

beforeEach(async () => {
  home = await tempDir();
});

afterEach(async () => {
  await cleanup(home);
});

describe.skipIf(SCRIPT.missing || !HAS_SCRIPT)(SCRIPT.title('on a terminal'), () => {
  it('download at 80 columns: a progress line that fits, then only the skipped file and the summary stay', async () => {
    const first = await runCli(['download', '--url', server.url, pathOf(NAMES[0] as string)], { cwd: home });
    expect(first.code).toBe(0);
    const paths = NAMES.slice(0, 3).map(pathOf);
    const run = await runInTerminal(['download', '--url', server.url, ...paths], { cwd: home, columns: 80 });
    expect(run.code).toBe(0);
    // It animated: the line was redrawn in place, with a percentage.
    expect(run.stdout).toContain('\r\u001b[2KDownloading ');
    expect(drawnLines(run.stdout).some((line) => /^Downloading \d\/3 .*\d+%/.test(line))).toBe(true);
    // The refreshing line never wraps (a wrapped one could not be erased in place).
    for (const line of drawnLines(run.stdout).filter((text) => text.startsWith('Downloading'))) {
      expect(line.length).toBeLessThan(80);
    }
    const screen = screenText(run.stdout, 80);
    // What stays: the summary alone, each line within 80 columns; unchanged and downloaded files are counted.
    expect(screen[0]).toMatch(/^2 downloaded, 1 skipped \(verified\); 390\.6 KiB in /);
    expect(screen[1]).toBe("All 2 verified against the store's checksums.");
    expect(screen.join('\n')).not.toContain('Downloading');
  });

  it('with --verbose keeps a line for every file', async () => {
    const run = await runInTerminal(
      ['download', '--verbose', '--url', server.url, pathOf(NAMES[1] as string)],
      {
        cwd: home,
        columns: 80,
      },
    );
    expect(screenText(run.stdout, 80)[0]).toBe(`downloaded ${NAMES[1]} (195.3 KiB)`);
  });

  it.each([
    ['CI', 'true'],
    ['TERM', 'dumb'],
  ])('nothing animates with %s=%s: one plain line per file', async (name, value) => {
    const paths = NAMES.slice(0, 2).map(pathOf);
    const run = await runInTerminal(['download', '--url', server.url, ...paths], {
      cwd: home,
      columns: 80,
      env: { [name]: value },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('\u001b[2K');
    expect(run.stdout).not.toContain('Downloading ');
    expect(screenText(run.stdout, 80).filter((line) => line.startsWith('downloaded '))).toHaveLength(2);
  });

  it.each([80, 160])(
    'query at %i columns: a compact table that fits, one line per record',
    async (columns) => {
      const run = await runInTerminal(['query', '--url', server.url, '--instrument', 'swe'], {
        cwd: home,
        columns,
      });
      expect(run.code).toBe(0);
      const screen = screenText(run.stdout, columns);
      const table = screen.slice(screen.indexOf('Found [5] matching files'));
      expect(table).toHaveLength(1 + 2 + NAMES.length);
      for (const line of table) expect(line.length).toBeLessThanOrEqual(columns);
      expect(table[1]).toContain('Filename');
      expect(table[1]?.includes('Instrument')).toBe(columns === 160);
      for (const name of NAMES) expect(table.some((line) => line.endsWith(name))).toBe(true);
    },
  );

  it('sync at 80 columns: the summary, as download shows it; with --verbose the files relative to the working folder', async () => {
    const run = await runInTerminal(['sync', '--url', server.url, '--instrument', 'swe'], {
      cwd: home,
      columns: 80,
    });
    expect(run.code).toBe(0);
    const screen = screenText(run.stdout, 80).filter((line) => line !== '');
    expect(screen).toEqual([
      expect.stringMatching(/^5 downloaded; 976\.6 KiB in /),
      'Sync: 5 fetched; first run.',
    ]);
    for (const line of drawnLines(run.stdout)) expect(line.length).toBeLessThanOrEqual(80);
    const verbose = await runInTerminal(
      ['sync', '--url', server.url, '--instrument', 'swe', '--verbose', '--data-dir', 'other'],
      { cwd: home, columns: 80 },
    );
    expect(verbose.code).toBe(0);
    // Their absolute paths are longer than 80 columns here; relative ones are not.
    expect(`${home}/other/${pathOf(NAMES[0] as string)}`.length).toBeGreaterThan(80);
    const listed = screenText(verbose.stdout, 80).filter((line) => line.startsWith('other/'));
    expect(listed).toEqual(NAMES.map((name) => `other/${pathOf(name)}`));
    for (const line of drawnLines(verbose.stdout)) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('sync --watch at 80 columns: one line per run, and nothing else', async () => {
    const run = await runInTerminalFor(
      3.5,
      ['sync', '--url', server.url, '--instrument', 'swe', '--watch', '1s'],
      { cwd: home, columns: 80 },
    );
    expect(run.code).toBe(130);
    const screen = screenText(run.stdout, 80).filter((line) => line !== '');
    expect(screen.length).toBeGreaterThanOrEqual(2);
    expect(screen[0]).toMatch(/^\[\d\d:\d\d:\d\dZ\] sync run 1: 5 fetched; first run\.$/);
    for (const [index, line] of screen.slice(1).entries()) {
      expect(line).toMatch(
        new RegExp(
          `^\\[\\d\\d:\\d\\d:\\d\\dZ\\] sync run ${index + 2}: nothing new; asked for files ingested since \\d{8}\\.$`,
        ),
      );
    }
    for (const line of drawnLines(run.stdout)) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('an upload batch without a key fails once and stops; the re-run of a stored batch ends 0', async () => {
    const paths = NAMES.map(pathOf);
    for (const name of NAMES)
      await putFile(`${home}/data`, name, bytesFor(name, 200_000 + NAMES.indexOf(name)));
    const refused = await runInTerminal(['upload', '--url', server.url, '--concurrency', '1', ...paths], {
      cwd: home,
      columns: 80,
    });
    expect(refused.code).toBe(1);
    const screen = screenText(refused.stdout, 80);
    expect(screen.filter((line) => line.startsWith('failed '))).toHaveLength(1);
    expect(screen).toContain('Stopped: 4 files not started, as the service asked for an API key (401).');
    expect(screen.some((line) => line.startsWith('Hint: Uploads need a valid API key'))).toBe(true);

    const stored = await runInTerminal(
      ['upload', '--url', server.url, '--api-key', 'right-key', paths[0] as string],
      {
        cwd: home,
        columns: 80,
      },
    );
    expect(stored.code).toBe(0);
    const again = await runInTerminal(
      ['upload', '--url', server.url, '--api-key', 'right-key', paths[0] as string],
      {
        cwd: home,
        columns: 80,
      },
    );
    expect(again.code).toBe(0);
    const screen2 = screenText(again.stdout, 80);
    expect(screen2[0]).toMatch(/^1 already stored \(same bytes\); /);
    expect(screen2).toHaveLength(1);
  });
});

describe('dry runs', () => {
  /** An address where nothing listens: a dry run that asked anything of it would fail. */
  const NOWHERE = 'http://127.0.0.1:9';

  it('download --dry-run says what would be fetched, checked and skipped, and asks nothing of the service', async () => {
    const [verified, present, absent] = NAMES.map(pathOf);
    expect((await runCli(['download', '--url', server.url, verified as string], { cwd: home })).code).toBe(0);
    await putFile(`${home}/data`, NAMES[1] as string, 'a copy of unknown origin');
    const run = await runCli(
      ['download', '--dry-run', '--url', NOWHERE, verified as string, present as string, absent as string],
      {
        cwd: home,
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      `would skip (verified copy) ${verified} (local copy 195.3 KiB)`,
      `would check ${present} (local copy 24 B)`,
      `would download ${absent}`,
      'Dry run: 1 to download, 1 to check, 1 to skip (verified copies).',
      'To check: present but not verified; fetched again if different from the store.',
      'Nothing was fetched.',
      '',
    ]);
    expect(await listFiles(`${home}/data`)).toEqual([verified, present].sort());
  });

  it('upload --dry-run checks names and finds the files without any request', async () => {
    await putFile(`${home}/data`, NAMES[0] as string, 'abc');
    const ok = await runCli(['upload', '--dry-run', '--url', NOWHERE, pathOf(NAMES[0] as string)], {
      cwd: home,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`as ${pathOf(NAMES[0] as string)} (3 B)`);
    expect(ok.stdout).toContain('Dry run: 1 file (3 B) named and placed as the rules say.');
    const missing = await runCli(['upload', '--dry-run', '--url', NOWHERE, NAMES[1] as string], {
      cwd: home,
    });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`cannot upload ${NAMES[1]}: File not found`);
    const bad = await runCli(['upload', '--dry-run', '--url', NOWHERE, 'imap_mag_bad.cdf'], { cwd: home });
    expect(bad.code).toBe(2);
  });

  it('dry runs print JSON with --output-format json, and summaries within 80 columns', async () => {
    const [verified, absent] = [pathOf(NAMES[0] as string), pathOf(NAMES[2] as string)];
    expect((await runCli(['download', '--url', server.url, verified], { cwd: home })).code).toBe(0);
    const down = await runCli(
      ['download', '--dry-run', '--output-format', 'json', '--url', NOWHERE, verified, absent],
      { cwd: home },
    );
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toEqual([
      {
        file_path: verified,
        local_path: expect.stringContaining(NAMES[0] as string),
        action: 'skip',
        local_bytes: 200_000,
      },
      {
        file_path: absent,
        local_path: expect.stringContaining(NAMES[2] as string),
        action: 'download',
        local_bytes: null,
      },
    ]);
    expect(down.stderr).toBe(
      'Dry run: 1 to download, 0 to check, 1 to skip (verified copies).\nNothing was fetched.\n',
    );

    const up = await runCli(
      ['upload', '--dry-run', '--output-format', 'json', '--url', NOWHERE, verified, NAMES[1] as string],
      { cwd: home },
    );
    expect(up.code).toBe(1);
    expect(JSON.parse(up.stdout)).toEqual([
      expect.objectContaining({ file_path: verified, action: 'upload', bytes: 200_000 }),
      expect.objectContaining({
        file_path: pathOf(NAMES[1] as string),
        action: 'cannot-upload',
        local_path: null,
      }),
    ]);
    for (const line of [...down.stderr.split('\n'), ...up.stderr.split('\n')]) {
      expect(line.length).toBeLessThanOrEqual(80);
    }
    const text = await runCli(['upload', '--dry-run', '--url', NOWHERE, verified], { cwd: home });
    const summary = text.stdout.split('\n').filter((line) => !line.startsWith('would upload '));
    expect(summary).toEqual([
      'Dry run: 1 file (195.3 KiB) named and placed as the rules say.',
      'Nothing was sent; whether the service holds them already is not checked.',
      '',
    ]);
  });
});
