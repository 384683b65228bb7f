/**
 * What each change saved: `node bench/ladder.js [--quick] [--repetitions N] COMMIT...` builds the command line of each commit (a
 * detached worktree under the system's temporary folder, sharing this checkout's node_modules) and times each
 * build's downloads against one reference server of this checkout, interleaved: one file of 1 GiB (to the disk)
 * and 1,000 files of 64 KiB (16 at a time, into a folder in memory where the system has one, as the transfer
 * group's batches: `batchFolder`), CPU (user + system) beside wall time, medians. curl runs in the same rounds
 * for scale. Not part of `npm run bench`: a tool for a closing note, run with nothing else on the machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchFolder, checkFiles, writeLargeFile } from './lib/files.js';
import { command, compareRuns } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { markdownTable, median, seconds } from './lib/stats.js';
import { generateStore, largeKey } from './lib/store.js';
import { touchObjects } from './lib/warm-up.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
/** `--repetitions N`: more rounds where a case's times are spread (a 1 GiB file's system time on a busy page cache). */
const repeatAt = args.indexOf('--repetitions');
const asked = repeatAt === -1 ? undefined : Number(args[repeatAt + 1]);
// The commits: every argument but the flags and the number after `--repetitions` (when it is given).
const commits = args.filter(
  (arg, at) => arg !== '--quick' && (repeatAt === -1 || (at !== repeatAt && at !== repeatAt + 1)),
);
if (commits.length === 0) {
  console.error('usage: node bench/ladder.js [--quick] [--repetitions N] COMMIT...');
  process.exit(2);
}

/** Builds `commit` in a worktree of its own; returns the path of its bin. */
function build(commit, base) {
  const dir = join(base, commit);
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', dir, commit], { stdio: 'ignore' });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: 'ignore' });
  return join(dir, 'bin/mission-data.js');
}

const MIB = 1024 * 1024;
const size = quick ? 64 * MIB : 1024 * MIB;
const count = quick ? 100 : 1000;
const repetitions = asked ?? (quick ? 2 : 7);
const base = await mkdtemp(join(tmpdir(), 'mission-data-ladder-'));
let server;
/** Where the batch lands: in memory where the system offers it, as in the transfer group (`batchFolder`). */
let batchDir;
try {
  const bins = commits.map((commit) => ({ commit, bin: build(commit, base) }));
  const storeDir = join(base, 'store');
  writeLargeFile(join(storeDir, ...largeKey(size).split('/')), size);
  const small = await generateStore(storeDir, { count, size: 64 * 1024 });
  server = await startServerProcess(storeDir);
  await touchObjects(server.url, [largeKey(size), ...small.keys]);
  const outDir = join(base, 'out');
  batchDir = batchFolder('mission-data-ladder-batch-');
  const input = `${small.keys.join('\n')}\n`;
  const curlConfig = join(base, 'small.curl');
  writeFileSync(
    curlConfig,
    small.keys
      .map((key, i) => `url = "${server.url}/download/${key}"\noutput = "${batchDir}/f${i}"\n`)
      .join(''),
  );
  const cases = [
    {
      label: `one file of ${size / MIB} MiB`,
      files: { count: 1, size },
      out: outDir,
      run: (bin) => [bin, 'download', largeKey(size), '--url', server.url, '--data-dir', outDir, '-q'],
      curl: [
        '-sS',
        '-f',
        '-L',
        '--create-dirs',
        '-o',
        join(outDir, 'large'),
        `${server.url}/download/${largeKey(size)}`,
      ],
      input: '',
    },
    {
      label: `${count} files of 64 KiB, 16 at a time`,
      files: { count, size: 64 * 1024 },
      out: batchDir,
      run: (bin) => [
        bin,
        'download',
        '-',
        '--concurrency',
        '16',
        '--url',
        server.url,
        '--data-dir',
        batchDir,
        '-q',
      ],
      curl: ['-sS', '-f', '-L', '--parallel', '--parallel-max', '16', '-K', curlConfig],
      input,
    },
  ];
  const rows = [];
  for (const which of cases) {
    const results = await compareRuns({
      repetitions,
      prepare: () => {
        rmSync(which.out, { recursive: true, force: true });
        mkdirSync(which.out, { recursive: true });
      },
      verify: (name) => checkFiles(name, which.out, which.files),
      runs: [
        ...bins.map(({ commit, bin }) => ({
          name: commit,
          make: () => command(commit, process.execPath, which.run(bin), { input: which.input }),
        })),
        { name: 'curl', make: () => command('curl', 'curl', which.curl) },
      ],
    });
    for (const name of [...commits, 'curl']) {
      const result = results[name];
      rows.push([
        which.label,
        name,
        `${seconds(result.ms)} s`,
        `${seconds(result.cpuMs)} s`,
        `${seconds(median(result.runs.map((run) => run.userMs)))} + ${seconds(median(result.runs.map((run) => run.systemMs)))}`,
        (result.cpuMs / results.curl.cpuMs).toFixed(2),
      ]);
    }
  }
  console.log(
    markdownTable(['case', 'build', 'wall (median)', 'CPU (median)', 'user + system', 'CPU × curl'], rows),
  );
} finally {
  await server?.close();
  for (const commit of commits) {
    const dir = join(base, commit);
    if (existsSync(dir))
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', dir], { stdio: 'ignore' });
  }
  rmSync(base, { recursive: true, force: true });
  if (batchDir) rmSync(batchDir, { recursive: true, force: true });
}
