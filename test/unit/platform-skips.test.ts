/**
 * The suite runs on Linux, macOS and Windows (.github/workflows/ci.yml): every test that needs a facility only
 * some of them have (SIGSTOP, `/proc`, a tmpfs, util-linux's `script`, `prlimit`, bash, a signal the child
 * handles, file modes, symlinks) is skipped elsewhere with what it needs in its title. This reads the test
 * sources, refuses a use that no such skip covers, and pins the list of those tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/e2e.js';
import { linuxOnly, unixOnly } from '../helpers/platform.js';
import { platformSkips, platformUses } from '../helpers/platform-uses.js';

/** The test sources, as paths from the repository root; the helpers and this file (which names the facilities) left out. */
function testSources(): string[] {
  return readdirSync(join(ROOT, 'test'), { recursive: true })
    .map((entry) => `test/${String(entry).split('\\').join('/')}`)
    .filter((file) => file.endsWith('.ts') && !file.startsWith('test/helpers/'))
    .filter((file) => file !== 'test/unit/platform-skips.test.ts')
    .sort();
}

const sources = testSources().map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

/** The tests skipped on macOS or Windows, by file and title (the need in it). */
const SKIPPED = [
  'test/e2e/completion.test.ts: completion bash (not on Windows: bash)',
  'test/e2e/completion.test.ts: registers a completion function for mission-data (Linux only: bash 4 or later, macOS ships 3.2)',
  "test/e2e/completion.test.ts: completion bash on a terminal (Tab typed into an interactive bash) (Linux only: util-linux's script)",
  'test/e2e/coverage.test.ts: completion of coverage and status (not on Windows: bash)',
  "test/e2e/coverage.test.ts: fits %i columns without a wrapped row (Linux only: util-linux's script)",
  'test/e2e/data-root.test.ts: says a data root below a read-only mount is read-only, not ENOENT (Linux only: tmpfs)',
  'test/e2e/data-root.test.ts: lists its verified files on stdout and exits 0; a missing one still fails (Linux only: tmpfs)',
  'test/e2e/data-root.test.ts: counts only the bytes kept in part files, and says nothing is kept when none is (Linux only: tmpfs)',
  'test/e2e/data-root.test.ts: one file at a time: the file the disk filled under fails, the files not begun are not started (Linux only: tmpfs)',
  'test/e2e/download-output.test.ts: Ctrl-C in the middle of a batch (point 4) (not on Windows: SIGINT)',
  "test/e2e/download-targets.test.ts: on a terminal, says it is reading stdin (Linux only: util-linux's script)",
  'test/e2e/integrity.test.ts: a file size limit hit midway (EFBIG) is a clear error; the copy in place is kept, no part left (Linux only: prlimit)',
  'test/e2e/integrity.test.ts: a file larger than the free space (a tmpfs of 4 MiB) is refused before its bytes, saying what it needs and what is free (Linux only: tmpfs)',
  'test/e2e/integrity.test.ts: transfers only the missing bytes, counted at the server (not on Windows: SIGINT)',
  'test/e2e/interruption.test.ts: an interrupted batch (not on Windows: SIGINT and SIGTERM)',
  'test/e2e/operators.test.ts: a folder server (not on Windows: SIGTERM)',
  'test/e2e/operators.test.ts: /metrics passes promtool check metrics, with small label sets and no file path (Linux only: prometheus)',
  'test/e2e/operators.test.ts: two servers on one bucket and one database (not on Windows: SIGTERM)',
  'test/e2e/operators.test.ts: a real Prometheus scrapes both: the request counter rises by the requests sent, pending uploads rise and fall to 0 (Linux only: prometheus)',
  'test/e2e/pack.test.ts: the package as shipped (not on Windows: a symlinked node_modules and a bin without .cmd)',
  'test/e2e/readme.test.ts: the README examples on the demo archive (not on Windows: bash)',
  'test/e2e/sync.test.ts: two at once, and interrupted (not on Windows: SIGINT)',
  'test/e2e/sync.test.ts: --watch picks up an upload, and stops on SIGINT with 130 and no part file (not on Windows: SIGINT)',
  "test/e2e/terminal.test.ts: on a terminal (Linux only: util-linux's script)",
  'test/e2e/transfer.test.ts: %s mid-download leaves only its part, to resume, and no file (not on Windows: SIGINT and SIGTERM)',
  "test/e2e/upload-on-terminal.test.ts: on a terminal at 80 columns (Linux only: util-linux's script)",
  'test/e2e/verify.test.ts: a flipped byte and a hand-copied file: status sees nothing of the flip, verify names both, --repair mends them, then all ok (not on Windows: touch -r)',
  "test/e2e/waiting.test.ts: two processes downloading the same file (Linux only: util-linux's script)",
  'test/server/frozen-backend.test.ts: a frozen database (Linux only: SIGSTOP)',
  'test/server/hostile.test.ts: symlinks placed in the store (not on Windows: symlinks)',
  'test/server/serve.test.ts: mission-data serve (not on Windows: SIGTERM and SIGINT)',
  'test/server/start.test.ts: refuses a symlinked .incoming folder, so no upload is written outside the store (not on Windows: symlinks)',
  'test/server/start.test.ts: refuses a symlinked secret file (not on Windows: symlinks)',
  'test/server/storage.test.ts: a full store (a tmpfs of 4 MiB) (Linux only: tmpfs)',
  'test/server/storage.test.ts: a read-only store (a tmpfs remounted read-only) (Linux only: tmpfs)',
  'test/server/storage.test.ts: a file size limit hit midway through the body (EFBIG) is a 500 naming it, answered once (Linux only: prlimit)',
  'test/server/storage.test.ts: sidecars are never read or written through symlinks (not on Windows: symlinks)',
  'test/unit/batch-syscalls.test.ts: a folder changed after the batch checked it (not on Windows: symlinks)',
  'test/unit/completion-scripts.test.ts: without compopt, as in bash 3.2 (not on Windows: bash)',
  'test/unit/config.test.ts: is written by set and unset, readable by its owner only (not on Windows: file modes)',
  'test/unit/download.test.ts: never writes through a planted link: a leftover part that is a symlink is removed, not followed (not on Windows: symlinks)',
  'test/unit/download.test.ts: refuses a folder on the way that is a symlink leading outside the data root, naming it (not on Windows: symlinks)',
  'test/unit/download.test.ts: accepts a data root that is itself a symlink, and folders linked inside it (not on Windows: symlinks)',
  'test/unit/learned-connections.test.ts: fails no download when its record cannot be written (not on Windows: file modes)',
  'test/unit/no-follow.test.ts: a link at the last segment (not on Windows: symlinks)',
  'test/unit/read-only-roots.test.ts: lists the file once, as missing, saying what is in its place (not on Windows: mkfifo)',
  'test/unit/signals.test.ts: a command line sent SIGHUP (not on Windows: SIGHUP)',
  'test/unit/upload-special-files.test.ts: a FIFO given to upload (not on Windows: mkfifo)',
];

describe('tests that need Linux or a Unix system', () => {
  it('are each skipped where what they need is missing, saying so in their title', () => {
    const unguarded = sources
      .flatMap(({ file, text }) => platformUses(file, text))
      .filter((use) => use.skippedAs === undefined)
      .map((use) => `${use.file}:${use.line} uses ${use.facility} outside a test skipped without it`);
    expect(unguarded).toEqual([]);
  });

  it('skip where their title says they do', () => {
    const lying = sources
      .flatMap(({ file, text }) => platformSkips(file, text))
      .filter((skip) => !skip.skips)
      .map((skip) => `${skip.file}:${skip.line} ${skip.title}: no skipIf reads the need's missing`);
    expect(lying).toEqual([]);
  });

  it('are these (the list a run on macOS or Windows reports as skipped)', () => {
    const skipped = sources.flatMap(({ file, text }) =>
      platformSkips(file, text).map((skip) => `${skip.file}: ${skip.title}`),
    );
    console.log(`Skipped on macOS or Windows:\n${skipped.join('\n')}`);
    expect(skipped).toEqual(SKIPPED);
  });
});

describe('the check of platform skips', () => {
  const file = 'test/e2e/example.test.ts';
  const head = `import { describe, it } from 'vitest';\nimport { linuxOnly, unixOnly } from '../helpers/platform.js';\n`;

  it('refuses a use of a Linux-only facility outside a skip, and accepts it inside one', () => {
    const bare = `${head}it('stops the database', () => { process.kill(pid, 'SIGSTOP'); });\n`;
    expect(platformUses(file, bare)).toEqual([
      { file, line: 3, facility: 'SIGSTOP' },
      { file, line: 3, facility: 'signals' },
    ]);
    const guarded = `${head}const STOP = linuxOnly('SIGSTOP');\ndescribe.skipIf(STOP.missing)(STOP.title('a frozen database'), () => {\n  it('stops', () => { process.kill(pid, 'SIGSTOP'); });\n});\n`;
    expect(platformUses(file, guarded).map((use) => use.skippedAs)).toEqual([
      ['a frozen database (Linux only: SIGSTOP)', 'stops'],
      ['a frozen database (Linux only: SIGSTOP)', 'stops'],
    ]);
  });

  it('refuses a Unix-only skip for a Linux-only facility, and a title that names a need without skipping', () => {
    const unix = `${head}const BASH = unixOnly('bash');\nit.skipIf(BASH.missing)(BASH.title('reads /proc'), () => { readFileSync('/proc/self/stat'); });\n`;
    expect(platformUses(file, unix)).toEqual([{ file, line: 4, facility: '/proc' }]);
    const lying = `${head}const BASH = unixOnly('bash');\nit(BASH.title('runs bash'), () => { execFileSync('bash', ['-c', 'true']); });\n`;
    expect(platformUses(file, lying)).toEqual([{ file, line: 4, facility: 'bash' }]);
    expect(platformSkips(file, lying)).toEqual([
      { file, line: 4, title: 'runs bash (not on Windows: bash)', skips: false },
    ]);
  });

  it('follows a module-level function to its calls, and lets probes and cleanup hooks be', () => {
    const source = `${head}const SCRIPT = linuxOnly('script');
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
function onTerminal() { return spawn('script', ['-qec', 'true', '/dev/null']); }
afterEach(() => child.kill('SIGTERM'));
describe.skipIf(SCRIPT.missing || !HAS_SCRIPT)(SCRIPT.title('on a terminal'), () => {
  it('draws', () => onTerminal());
});
it('draws again', () => onTerminal());
`;
    const uses = platformUses(file, source);
    expect(uses.filter((use) => use.skippedAs === undefined)).toEqual([
      { file, line: 5, facility: 'script' },
      { file, line: 5, facility: '/dev/null' },
    ]);
    expect(uses.filter((use) => use.skippedAs !== undefined).map((use) => use.line)).toEqual([4, 6]);
  });

  it('names the need in the title on every system, and skips only where it is missing', () => {
    expect(linuxOnly('SIGSTOP', 'darwin')).toMatchObject({ missing: true });
    expect(linuxOnly('SIGSTOP', 'linux')).toMatchObject({ missing: false });
    expect(unixOnly('symlinks', 'darwin')).toMatchObject({ missing: false });
    expect(unixOnly('symlinks', 'win32')).toMatchObject({ missing: true });
    expect(linuxOnly('SIGSTOP', 'win32').title('a frozen database')).toBe(
      'a frozen database (Linux only: SIGSTOP)',
    );
    expect(unixOnly('symlinks', 'linux').title('refuses a link')).toBe(
      'refuses a link (not on Windows: symlinks)',
    );
  });
});
