/**
 * Benchmark cases 1-3: `mission-data download` and `upload` against curl on the same reference server, with
 * the tool's peak resident memory.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command, compare, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { formatBytes, markdownTable } from './lib/stats.js';
import { generateStore } from './lib/store.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Sizes of a full run, and of `--quick` (to check the harness in seconds). */
export const SIZES = {
  full: { large: [256 * MIB, GIB], smallCount: 1000, smallSize: 64 * 1024, upload: GIB, repetitions: 9 },
  quick: {
    large: [16 * MIB, 64 * MIB],
    smallCount: 100,
    smallSize: 64 * 1024,
    upload: 64 * MIB,
    repetitions: 2,
  },
};

function largeKey(size) {
  return `imap/mag/l1b/2024/01/imap_mag_l1b_large${size / MIB}mib_20240101_20240101_v01-00.cdf`;
}

function uploadKey(serial) {
  const version = `v${String(1 + Math.floor(serial / 100)).padStart(2, '0')}-${String(serial % 100).padStart(2, '0')}`;
  return `imap/swe/l1b/2024/01/imap_swe_l1b_upload_20240101_20240101_${version}.cdf`;
}

/** Writes `size` bytes of incompressible content to `path`, 1 MiB at a time. */
function writeLargeFile(path, size) {
  mkdirSync(join(path, '..'), { recursive: true });
  const block = randomBytes(MIB);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < size; written += MIB)
      writeSync(fd, block, 0, Math.min(MIB, size - written));
  } finally {
    closeSync(fd);
  }
}

const speedRatio = (result) => result.referenceMs / result.toolMs;
const spread = (runs) => {
  const times = runs.map((run) => run.ms);
  return `${seconds(Math.min(...times))}–${seconds(Math.max(...times))} s`;
};
/** A case's table row, with the fastest and slowest run of each command appended, and its figures. */
const caseResult = (result, row) => ({
  row: [...row, `${spread(result.toolRuns)}; ${spread(result.referenceRuns)}`],
  ratio: speedRatio(result),
  peakRss: result.peakRss,
});
const seconds = (ms) => (ms / 1000).toFixed(2);
const mibPerSecond = (bytes, ms) => (bytes / MIB / (ms / 1000)).toFixed(0);

/** Case 1: one large file, `mission-data download <key>` against `curl -L -o` of the same URL. */
async function largeDownload(context, size) {
  const key = largeKey(size);
  const url = `${context.server.url}/download/${key}`;
  const result = await compare({
    repetitions: context.sizes.repetitions,
    prepare: () => rmSync(context.outDir, { recursive: true, force: true }),
    makeTool: () => tool(['download', key, '--url', context.server.url, '--data-dir', context.outDir]),
    makeReference: () =>
      command('curl', 'curl', ['-sS', '-f', '-L', '--create-dirs', '-o', join(context.outDir, 'large'), url]),
  });
  return caseResult(result, [
    `1. one file of ${formatBytes(size)}`,
    `${seconds(result.toolMs)} s (${mibPerSecond(size, result.toolMs)} MiB/s)`,
    `${seconds(result.referenceMs)} s (${mibPerSecond(size, result.referenceMs)} MiB/s)`,
    speedRatio(result).toFixed(2),
    formatBytes(result.peakRss),
  ]);
}

/** Case 2: many small files, `download -` with `--concurrency 16` against `curl --parallel --parallel-max 16`. */
async function manySmallDownloads(context) {
  const { keys } = context.small;
  const curlConfig = join(context.workDir, 'small.curl');
  writeFileSync(
    curlConfig,
    keys
      .map((key, i) => `url = "${context.server.url}/download/${key}"\noutput = "${context.outDir}/f${i}"\n`)
      .join(''),
  );
  const result = await compare({
    repetitions: context.sizes.repetitions,
    prepare: () => {
      rmSync(context.outDir, { recursive: true, force: true });
      mkdirSync(context.outDir, { recursive: true });
    },
    makeTool: () =>
      tool(
        ['download', '-', '--concurrency', '16', '--url', context.server.url, '--data-dir', context.outDir],
        {
          input: `${keys.join('\n')}\n`,
        },
      ),
    makeReference: () =>
      command('curl', 'curl', ['-sS', '-f', '-L', '--parallel', '--parallel-max', '16', '-K', curlConfig]),
  });
  const filesPerSecond = (ms) => (keys.length / (ms / 1000)).toFixed(0);
  return caseResult(result, [
    `2. ${keys.length} files of ${formatBytes(context.sizes.smallSize)}, 16 at a time`,
    `${seconds(result.toolMs)} s (${filesPerSecond(result.toolMs)} files/s)`,
    `${seconds(result.referenceMs)} s (${filesPerSecond(result.referenceMs)} files/s)`,
    speedRatio(result).toFixed(2),
    formatBytes(result.peakRss),
  ]);
}

/**
 * Case 3: one large upload, `mission-data upload <path>` (which asks `/upload` for the signed URL, then PUTs)
 * against `curl -T` to a signed URL fetched beforehand. Each run stores a new version of the file (hard links
 * of one source file), and the previous run's object is removed from the store, untimed.
 */
async function largeUpload(context, { checksum }) {
  const size = context.sizes.upload;
  const { source, dataDir } = context.upload;
  let stored = [];
  const nextFile = () => {
    const key = uploadKey(context.upload.serial++);
    const path = join(dataDir, ...key.split('/'));
    mkdirSync(join(path, '..'), { recursive: true });
    linkSync(source, path);
    stored.push(join(context.storeDir, ...key.split('/')));
    return { key, path };
  };
  const signedUrls = [];
  const result = await compare({
    repetitions: context.sizes.repetitions,
    prepare: async (which) => {
      for (const path of stored) rmSync(path, { force: true });
      stored = [];
      if (which === 'reference') {
        const file = nextFile();
        const response = await fetch(`${context.server.url}/upload/${file.key}`);
        const envelope = await response.json();
        if (envelope.statusCode !== 200) throw new Error(`/upload/${file.key}: ${JSON.stringify(envelope)}`);
        signedUrls.push({ path: file.path, url: envelope.body });
      }
    },
    makeTool: () =>
      tool(['upload', nextFile().path, '--url', context.server.url, ...(checksum ? [] : ['--no-checksum'])]),
    makeReference: () => {
      const { path, url } = signedUrls.shift();
      // An empty Expect header: curl otherwise waits for "100 Continue" before a large body.
      return command('curl', 'curl', ['-sS', '-f', '-H', 'Expect:', '-T', path, url]);
    },
  });
  for (const path of stored) rmSync(path, { force: true });
  return caseResult(result, [
    `3. upload of one file of ${formatBytes(size)}${checksum ? '' : ', `--no-checksum`'}`,
    `${seconds(result.toolMs)} s (${mibPerSecond(size, result.toolMs)} MiB/s)`,
    `${seconds(result.referenceMs)} s (${mibPerSecond(size, result.referenceMs)} MiB/s)`,
    speedRatio(result).toFixed(2),
    formatBytes(result.peakRss),
  ]);
}

/** Runs cases 1-3 and returns their markdown section. */
export async function run({ quick = false } = {}) {
  const sizes = quick ? SIZES.quick : SIZES.full;
  const workDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-transfer-'));
  const storeDir = join(workDir, 'store');
  let server;
  try {
    for (const size of sizes.large) writeLargeFile(join(storeDir, ...largeKey(size).split('/')), size);
    const small = await generateStore(storeDir, { count: sizes.smallCount, size: sizes.smallSize });
    server = await startServerProcess(storeDir);
    const context = { sizes, workDir, storeDir, server, small, outDir: join(workDir, 'out') };
    const large = [];
    for (const size of sizes.large) large.push(await largeDownload(context, size));
    const manySmall = await manySmallDownloads(context);
    const source = join(workDir, 'upload-source');
    writeLargeFile(source, sizes.upload);
    context.upload = { source, dataDir: join(workDir, 'upload-data'), serial: 0 };
    const upload = await largeUpload(context, { checksum: true });
    const uploadNoChecksum = await largeUpload(context, { checksum: false });
    const all = [...large, manySmall, upload, uploadNoChecksum];
    const rows = all.map((result) => result.row);
    const ratio = (result, goal) => ({ measured: result.ratio.toFixed(2), met: result.ratio >= goal });
    const memoryGrowth = (large.at(-1)?.peakRss ?? 0) / (large[0]?.peakRss ?? 1) - 1;
    const goals = [
      ...large.map((result) => ({ goal: `${result.row[0]}: speed ratio ≥ 1.0`, ...ratio(result, 1) })),
      { goal: `${manySmall.row[0]}: speed ratio ≥ 1.0`, ...ratio(manySmall, 1) },
      { goal: `${upload.row[0]}: speed ratio ≥ 0.95`, ...ratio(upload, 0.95) },
      { goal: `${uploadNoChecksum.row[0]}: speed ratio ≥ 0.95`, ...ratio(uploadNoChecksum, 0.95) },
      {
        goal: 'Cases 1-3: peak memory of mission-data under 150 MiB',
        measured: formatBytes(Math.max(...all.map((result) => result.peakRss))),
        met: all.every((result) => result.peakRss < 150 * MIB),
      },
      {
        goal: `Case 1: peak memory the same at ${formatBytes(sizes.large[0])} and ${formatBytes(sizes.large.at(-1))} (within 10%)`,
        measured: `${memoryGrowth >= 0 ? '+' : ''}${(memoryGrowth * 100).toFixed(1)}%`,
        met: Math.abs(memoryGrowth) <= 0.1,
      },
    ];
    const markdown = [
      '### Transfers: mission-data against curl',
      '',
      `Median of ${sizes.repetitions} interleaved runs of each (after one warm-up run of each), on one reference ` +
        'server (`mission-data serve`, a process of its own) on 127.0.0.1. Times are wall times of the whole command, start-up ' +
        'included. Speed ratio = curl time / mission-data time (above 1.0: mission-data is faster). Peak memory ' +
        'is the largest resident set of the mission-data process over its runs.',
      '',
      'References: case 1 `curl -sS -f -L -o FILE URL/download/KEY`; case 2 `curl -sS -f -L --parallel ' +
        '--parallel-max 16 -K LIST` (one url/output pair per file); case 3 `curl -sS -f -H "Expect:" -T FILE ' +
        'SIGNED_URL` with the signed URL fetched beforehand (mission-data asks `/upload` for it within its time). ' +
        'By default mission-data reads the file twice, once to send its MD5 as `Content-MD5`; `--no-checksum` skips that.',
      '',
      markdownTable(
        [
          'Case',
          'mission-data',
          'curl',
          'Speed ratio',
          'Peak memory (mission-data)',
          'Runs: fastest–slowest (mission-data; curl)',
        ],
        rows,
      ),
    ].join('\n');
    return { markdown, goals };
  } finally {
    await server?.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}
