/**
 * What `mission-data sync` prints, the command run in process against an archive in process: a run says what
 * changed in it only (`--watch --output-format json` appended to a file never repeats a line), a run line on a
 * terminal drops its detail from the end, and a terminal gets the summary without the paths (`--verbose` lists
 * them) while a pipe gets the paths.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type SyncCommandOptions, sync } from '../../src/cli/commands/sync.js';
import { fitClauses } from '../../src/cli/fit-width.js';
import type { CommandIO } from '../../src/cli/io.js';
import { magFile, SyncArchive } from '../helpers/sync-archive.js';

/** The archive the command's client talks to. */
const current = vi.hoisted(() => ({ archive: undefined as SyncArchive | undefined, home: '' }));

vi.mock('../../src/cli/io.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/cli/io.js')>();
  return { ...original, clientFor: () => (current.archive as SyncArchive).client(current.home) };
});

let home: string;
let archive: SyncArchive;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-sync-output-'));
  archive = new SyncArchive();
  current.archive = archive;
  current.home = home;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A stream that keeps what is written to it, a terminal of `columns` or a pipe. */
function stream(columns?: number) {
  const stream = {
    text: '',
    isTTY: columns !== undefined,
    columns,
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
    // It takes every write at once: no drain, close or error to listen to.
    on: () => stream,
    off: () => stream,
  };
  return stream;
}

/** The command's streams: stdout and stderr terminals of `columns`, or pipes. */
function commandIO(terminal: { stdout?: number; stderr?: number } = {}) {
  const controller = new AbortController();
  const stdout = stream(terminal.stdout);
  const stderr = stream(terminal.stderr);
  const io = { stdout, stderr, stdin: process.stdin, signal: controller.signal } as unknown as CommandIO;
  return { io, stdout, stderr, controller };
}

const run = (options: Partial<SyncCommandOptions>, io: CommandIO) =>
  sync({ instrument: 'mag', quiet: false, ...options }, io);

/**
 * Runs `sync --watch` until its run `runs` has said its line; `between(run)` is called after each run's line
 * (before the next run starts).
 */
async function watchRuns(
  runs: number,
  options: Partial<SyncCommandOptions>,
  terminal: { stdout?: number; stderr?: number },
  between: (run: number) => void = () => {},
) {
  const streams = commandIO(terminal);
  const write = streams.stderr.write;
  streams.stderr.write = (chunk: string) => {
    write(chunk);
    const said = /sync run (\d+): /.exec(chunk);
    if (said) {
      between(Number(said[1]));
      if (Number(said[1]) >= runs) streams.controller.abort();
    }
    return true;
  };
  const status = await run({ watch: 1, ...options }, streams.io);
  return { ...streams, status };
}

describe('sync says what changed in the run only', () => {
  it('--watch --output-format json: a superseded version is one line, in the run that finds it', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    archive.add(magFile('02'), '2025-02-01 10:00:00');
    const watched = await watchRuns(4, { outputFormat: 'json' }, {}, (done) => {
      if (done === 1) archive.add(magFile('01', 'v01-01'), '2025-02-02 10:00:00');
    });
    expect(watched.status).toBe(130);
    const records = watched.stdout.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .map((record) => `${record.status} ${record.file_path}`);
    // Run 1's two files in either order, then run 2's; runs 3 and 4 print nothing.
    expect(records.slice(0, 2).sort()).toEqual([
      `downloaded ${magFile('01')}`,
      `downloaded ${magFile('02')}`,
    ]);
    expect(records.slice(2)).toEqual([
      `downloaded ${magFile('01', 'v01-01')}`,
      `superseded ${magFile('01')}`,
    ]);
    expect(watched.stderr.text).toMatch(/sync run 2: 1 fetched, 1 superseded version kept/);
    expect(watched.stderr.text).toMatch(/sync run 3: nothing new; asked for files ingested since 20250201\./);
    expect(watched.stderr.text).toMatch(/sync run 4: nothing new; asked for files ingested since 20250201\./);

    // A one-shot run after them: nothing new, and nothing else.
    const once = commandIO();
    expect(await run({}, once.io)).toBe(0);
    expect(once.stdout.text).toBe('');
    expect(once.stderr.text).toBe('Sync: nothing new; asked for files ingested since 20250201.\n');
    const json = commandIO();
    expect(await run({ outputFormat: 'json' }, json.io)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toEqual([]);
  });

  it('--watch --full --output-format json: a verified copy left as it was is no line', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    const watched = await watchRuns(3, { full: true, outputFormat: 'json' }, {});
    expect(
      watched.stdout.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).status),
    ).toEqual(['downloaded']);
    expect(watched.stderr.text).toMatch(/sync run 3: nothing new; compared the whole selection\./);
  });
});

describe('sync --watch on a terminal', () => {
  it('fits each run line to the width by dropping clauses from the end', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    const watched = await watchRuns(3, {}, { stdout: 80, stderr: 80 }, (done) => {
      if (done === 1) archive.add(magFile('01', 'v01-01'), '2025-02-02 10:00:00');
    });
    const lines = watched.stderr.text.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\dZ\] sync run 1: 1 fetched; first run\.$/);
    // `1 fetched, 1 superseded version kept (--prune removes them); asked for files ingested since …` is wider.
    expect(lines[1]).toMatch(/^\[\d\d:\d\d:\d\dZ\] sync run 2: 1 fetched…$/);
    expect(lines[2]).toMatch(
      /^\[\d\d:\d\d:\d\dZ\] sync run 3: nothing new; asked for files ingested since 20250201\.$/,
    );
    expect(watched.stdout.text).toBe('');
  });
});

describe('fitClauses', () => {
  it('keeps a line that fits, and otherwise drops whole clauses from its end', () => {
    const line =
      '1 fetched, 1 superseded version kept (--prune removes them); asked for files ingested since 20250101.';
    expect(fitClauses(line, line.length)).toBe(line);
    expect(fitClauses(line, line.length - 1)).toBe(
      '1 fetched, 1 superseded version kept (--prune removes them)…',
    );
    expect(fitClauses(line, 60)).toBe('1 fetched, 1 superseded version kept (--prune removes them)…');
    expect(fitClauses(line, 59)).toBe('1 fetched…');
    expect(fitClauses('run 2: failed: connect ECONNREFUSED', 20)).toBe('run 2: failed…');
    // A first clause wider than the width is cut at its end.
    expect(fitClauses('a-single-clause-far-too-long', 10)).toBe('a-single-…');
    expect([...fitClauses('é'.repeat(30), 10)]).toHaveLength(10);
  });
});

describe('sync lists the paths fetched', () => {
  it('not on a terminal, which gets the summary (as download does)', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    archive.add(magFile('02'), '2025-02-01 10:00:00');
    const terminal = commandIO({ stdout: 80 });
    expect(await run({}, terminal.io)).toBe(0);
    expect(terminal.stdout.text).toBe('');
    expect(terminal.stderr.text).toContain('Sync: 2 fetched; first run.');
  });

  it('on a terminal with --verbose, or with --output-format paths', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    const verbose = commandIO({ stdout: 300 });
    expect(await run({ verbose: true }, verbose.io)).toBe(0);
    expect(verbose.stdout.text.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`${magFile('01').replaceAll('.', '\\.')}$`)),
    ]);
    archive.add(magFile('02'), '2025-02-02 10:00:00');
    const named = commandIO({ stdout: 80 });
    expect(await run({ outputFormat: 'paths' }, named.io)).toBe(0);
    expect(named.stdout.text).toBe(`${join(home, 'data', ...magFile('02').split('/'))}\n`);
  });

  it('piped, one local path per line, and as JSON anywhere', async () => {
    archive.add(magFile('01'), '2025-02-01 10:00:00');
    const piped = commandIO();
    expect(await run({}, piped.io)).toBe(0);
    expect(piped.stdout.text).toBe(`${join(home, 'data', ...magFile('01').split('/'))}\n`);
    archive.add(magFile('02'), '2025-02-02 10:00:00');
    const json = commandIO({ stdout: 80 });
    expect(await run({ outputFormat: 'json' }, json.io)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toEqual([
      {
        file_path: magFile('02'),
        local_path: join(home, 'data', ...magFile('02').split('/')),
        status: 'downloaded',
      },
    ]);
  });
});
