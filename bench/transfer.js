/**
 * Benchmark cases 1-3: `mission-data download` and `upload` against curl (and, for the checksummed upload,
 * `openssl md5` + curl) on the same reference server on loopback, with the wall and CPU time of each and the
 * tool's peak resident memory. The CPU goals are judged in every run; the wall-clock goals only when the machine
 * was quiet at the start.
 */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchFolder, checkFiles, writeLargeFile } from './lib/files.js';
import { firstByte } from './lib/first-byte.js';
import { loadMd5Base64 } from './lib/hash-file.js';
import { BIN, command, compare, compareRuns, tool, toolAgainstReference } from './lib/measure.js';
import { makeCertificate, startServerProcess } from './lib/server.js';
import {
  cpuGoal,
  cpuSeconds,
  formatBytes,
  markdownTable,
  median,
  seconds,
  spread,
  wallGoal,
} from './lib/stats.js';
import { generateStore, largeKey } from './lib/store.js';
import { touchObjects } from './lib/warm-up.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const LABELS = {
  tool: 'mission-data',
  reference: 'curl',
  floor: 'bare raw-socket loop',
  floorCrc: 'bare raw-socket loop with CRC-32',
  floorChecked: 'bare raw-socket loop doing what mission-data must per file',
  wireChecked: "same checked loop on mission-data's wire client",
  undici: 'bare undici loop',
  floorPut: 'bare raw-socket PUT',
};
const HASH_FILE = fileURLToPath(new URL('./lib/hash-file.js', import.meta.url));
const BARE_DOWNLOAD = fileURLToPath(new URL('./lib/bare-download.js', import.meta.url));
const BARE_BATCH = fileURLToPath(new URL('./lib/bare-batch.js', import.meta.url));
const BARE_BATCH_CHECKED = fileURLToPath(new URL('./lib/bare-batch-checked.js', import.meta.url));
const BARE_UNDICI_DOWNLOAD = fileURLToPath(new URL('./lib/bare-undici-download.js', import.meta.url));
const BARE_UNDICI_BATCH = fileURLToPath(new URL('./lib/bare-undici-batch.js', import.meta.url));
const BARE_UPLOAD = fileURLToPath(new URL('./lib/bare-upload.js', import.meta.url));

/**
 * The server a case runs against (the plain one, or the one on HTTPS), with what makes each command trust its
 * certificate: Node's NODE_EXTRA_CA_CERTS, curl's --cacert.
 */
function target(context, https) {
  if (!https) return { server: context.server, env: {}, curl: [], over: '' };
  const { cert } = context.tls;
  return {
    server: context.secureServer,
    env: { NODE_EXTRA_CA_CERTS: cert },
    curl: ['--cacert', cert],
    over: ' over HTTPS',
  };
}

/** Sizes of a full run, and of `--quick` (to check the harness in seconds). */
export const SIZES = {
  full: {
    large: [256 * MIB, GIB],
    smallCount: 1000,
    smallSize: 64 * 1024,
    tinyCount: 12_000,
    tinySize: 1024,
    tinyRepetitions: 5,
    upload: GIB,
    repetitions: 9,
    hashRepetitions: 5,
    firstByteRepetitions: 9,
  },
  quick: {
    large: [16 * MIB, 64 * MIB],
    smallCount: 100,
    smallSize: 64 * 1024,
    tinyCount: 500,
    tinySize: 1024,
    tinyRepetitions: 2,
    upload: 64 * MIB,
    repetitions: 2,
    hashRepetitions: 2,
    firstByteRepetitions: 2,
  },
};

function uploadKey(serial) {
  const version = `v${String(1 + Math.floor(serial / 100)).padStart(2, '0')}-${String(serial % 100).padStart(2, '0')}`;
  return `imap/swe/l1b/2024/01/imap_swe_l1b_upload_20240101_20240101_${version}.cdf`;
}

const speedRatio = (result) => result.referenceMs / result.toolMs;
/**
 * A case's table row: `[label, tool's time, reference's time]` and `memory`, with the speed ratio, the CPU of
 * each and their ratio, and the fastest and slowest run of each command; and its figures.
 */
const caseResult = (result, [label, toolTime, referenceTime], memory) => ({
  row: [
    label,
    toolTime,
    referenceTime,
    speedRatio(result).toFixed(2),
    cpuSeconds(result.toolRuns),
    cpuSeconds(result.referenceRuns),
    (result.toolCpuMs / result.referenceCpuMs).toFixed(2),
    memory,
    `${spread(result.toolRuns)}; ${spread(result.referenceRuns)}`,
  ],
  label,
  ratio: speedRatio(result),
  peakRss: result.peakRss,
  toolMs: result.toolMs,
  referenceMs: result.referenceMs,
  toolCpuMs: result.toolCpuMs,
  referenceCpuMs: result.referenceCpuMs,
});
/** A case's own row from a `compareRuns` result (mission-data against its reference), times told by `time`. */
const ownRow = (results, label, time) => {
  const result = toolAgainstReference(results);
  return caseResult(
    result,
    [label, time(result.toolMs), time(result.referenceMs)],
    formatBytes(result.peakRss),
  );
};
/** The same case against a floor timed in the same runs (`floor` or `undici`): a row of its own, and its figures. */
const againstFloor = (results, label, time, which = 'floor') => {
  const result = toolAgainstReference({ tool: results.tool, reference: results[which] });
  return caseResult(
    result,
    [`${label}: against the ${LABELS[which]}`, time(result.toolMs), time(result.referenceMs)],
    '–',
  );
};
const mibPerSecond = (bytes, ms) => (bytes / MIB / (ms / 1000)).toFixed(0);
const timeAndSpeed = (bytes, ms) => `${seconds(ms)} s (${mibPerSecond(bytes, ms)} MiB/s)`;

/**
 * Case 1: one large file, `mission-data download <key>` against `curl -L -o` of the same URL; in the same
 * interleaved runs, for scale, the floors of a Node client: the raw-socket loop of bench/lib/bare-download.js
 * and the undici loop of bench/lib/bare-undici-download.js. `https`: the same against the server on HTTPS.
 */
async function largeDownload(context, size, https = false) {
  const key = largeKey(size);
  const { server, env, curl, over } = target(context, https);
  const url = `${server.url}/download/${key}`;
  const floor =
    (script, label, ...extra) =>
    () => {
      mkdirSync(context.outDir, { recursive: true });
      return command(label, process.execPath, [script, url, join(context.outDir, 'large'), ...extra], {
        env,
      });
    };
  const results = await compareRuns({
    repetitions: context.sizes.repetitions,
    prepare: () => rmSync(context.outDir, { recursive: true, force: true }),
    verify: (which) => checkFiles(LABELS[which], context.outDir, { count: 1, size }),
    runs: [
      {
        name: 'tool',
        make: () => tool(['download', key, '--url', server.url, '--data-dir', context.outDir], { env }),
      },
      {
        name: 'reference',
        make: () =>
          command('curl', 'curl', [
            '-sS',
            '-f',
            '-L',
            ...curl,
            '--create-dirs',
            '-o',
            join(context.outDir, 'large'),
            url,
          ]),
      },
      { name: 'floor', make: floor(BARE_DOWNLOAD, LABELS.floor) },
      { name: 'floorCrc', make: floor(BARE_DOWNLOAD, LABELS.floorCrc, '--crc32') },
      { name: 'undici', make: floor(BARE_UNDICI_DOWNLOAD, LABELS.undici) },
    ],
  });
  const label = `1. one file of ${formatBytes(size)}${over}`;
  const time = (ms) => timeAndSpeed(size, ms);
  return {
    ...ownRow(results, label, time),
    floorMs: results.floor.ms,
    undiciMs: results.undici.ms,
    floor: againstFloor(results, label, time),
    floorCrc: againstFloor(results, label, time, 'floorCrc'),
    floorCrcMs: results.floorCrc.ms,
    undici: againstFloor(results, label, time, 'undici'),
  };
}

/**
 * A batch of `keys` (each file `size` bytes) downloaded into `outDir` by the tool, `curl --parallel 16` and the
 * floors (`floors`: names of LABELS with their scripts), interleaved; `label` names the case's rows.
 */
async function compareBatch({
  keys,
  size,
  url,
  outDir,
  curlConfig,
  repetitions,
  label,
  floors,
  env,
  curl = [],
}) {
  writeFileSync(
    curlConfig,
    keys.map((key, i) => `url = "${url}/download/${key}"\noutput = "${outDir}/f${i}"\n`).join(''),
  );
  const input = `${keys.join('\n')}\n`;
  // A floor is its script, or its script and the arguments that follow the URL and folder.
  const batch = (floor, name) => () => {
    const [script, ...more] = [floor].flat();
    return command(LABELS[name], process.execPath, [script, url, outDir, ...more], { input, env });
  };
  const parallel = ['-sS', '-f', '-L', ...curl, '--parallel', '--parallel-max', '16', '-K', curlConfig];
  const results = await compareRuns({
    repetitions,
    prepare: () => {
      rmSync(outDir, { recursive: true, force: true });
      mkdirSync(outDir, { recursive: true });
    },
    verify: (which) => checkFiles(LABELS[which], outDir, { count: keys.length, size }),
    runs: [
      {
        name: 'tool',
        make: () =>
          tool(['download', '-', '--concurrency', '16', '--url', url, '--data-dir', outDir], { input, env }),
      },
      { name: 'reference', make: () => command('curl', 'curl', parallel) },
      ...Object.entries(floors).map(([name, script]) => ({ name, make: batch(script, name) })),
    ],
  });
  const time = (ms) => `${seconds(ms)} s (${(keys.length / (ms / 1000)).toFixed(0)} files/s)`;
  const floorsOf = Object.keys(floors).flatMap((name) => [
    [`${name}Ms`, results[name].ms],
    [name, againstFloor(results, label, time, name)],
  ]);
  return {
    ...Object.fromEntries(floorsOf),
    ...ownRow(results, label, time),
  };
}

/** Case 2: many small files, `download -` with `--concurrency 16` against `curl --parallel --parallel-max 16`. */
async function manySmallDownloads(context, https = false) {
  const { keys } = context.small;
  const { server, env, curl, over } = target(context, https);
  return compareBatch({
    keys,
    size: context.sizes.smallSize,
    url: server.url,
    outDir: context.batchOutDir,
    curlConfig: join(context.workDir, 'small.curl'),
    repetitions: context.sizes.repetitions,
    label: `2. ${keys.length} files of ${formatBytes(context.sizes.smallSize)}, 16 at a time${over}`,
    floors: {
      floor: BARE_BATCH,
      floorChecked: BARE_BATCH_CHECKED,
      wireChecked: [BARE_BATCH_CHECKED, '--wire'],
      undici: BARE_UNDICI_BATCH,
    },
    env,
    curl,
  });
}

/** The `--connections` of case 1f: the default, one connection, and eight (ranges from the start). */
const FIRST_BYTE_CONNECTIONS = [
  { label: 'default', args: [] },
  { label: '`--connections 1`', args: ['--connections', '1'] },
  { label: '`--connections 8`', args: ['--connections', '8'] },
];

/**
 * Case 1f: the first byte of the large file on disk, from the command's start: `mission-data download` (with each
 * of FIRST_BYTE_CONNECTIONS) against `curl -o`, each watched by the same poller (bench/lib/first-byte.js),
 * interleaved; medians.
 */
async function firstByteOnDisk(context, size) {
  const key = largeKey(size);
  const url = `${context.server.url}/download/${key}`;
  const tool = FIRST_BYTE_CONNECTIONS.map(() => []);
  const reference = [];
  const fresh = () => {
    rmSync(context.outDir, { recursive: true, force: true });
    mkdirSync(context.outDir, { recursive: true });
    execFileSync('sync');
  };
  for (let i = 0; i < context.sizes.firstByteRepetitions; i += 1) {
    fresh();
    const args = ['-sS', '-f', '-L', '-o', join(context.outDir, 'large'), url];
    reference.push((await firstByte('curl', args, context.outDir)).ms);
    for (const [at, connections] of FIRST_BYTE_CONNECTIONS.entries()) {
      fresh();
      const args = [BIN, 'download', key, '--url', context.server.url, '--data-dir', context.outDir, '-q'];
      tool[at].push((await firstByte(process.execPath, [...args, ...connections.args], context.outDir)).ms);
    }
  }
  rmSync(context.outDir, { recursive: true, force: true });
  const variants = FIRST_BYTE_CONNECTIONS.map((connections, at) => ({
    label: connections.label,
    ms: median(tool[at]),
  }));
  return { toolMs: variants[0].ms, variants, referenceMs: median(reference), size, runs: reference.length };
}

/**
 * Case 2b: very many tiny files, where the cost of each file is everything: `download -` with `--concurrency 16`
 * against `curl --parallel --parallel-max 16`, from a store of their own (on a server process of its own).
 */
async function manyTinyDownloads(context) {
  const { sizes, workDir, batchDir } = context;
  const storeDir = join(workDir, 'tiny-store');
  const outDir = join(batchDir, 'tiny-out');
  const { keys } = await generateStore(storeDir, { count: sizes.tinyCount, size: sizes.tinySize });
  const server = await startServerProcess(storeDir);
  try {
    await touchObjects(server.url, keys);
    return await compareBatch({
      keys,
      size: sizes.tinySize,
      url: server.url,
      outDir,
      curlConfig: join(workDir, 'tiny.curl'),
      repetitions: sizes.tinyRepetitions,
      label: `2b. ${keys.length.toLocaleString('en-US')} files of ${formatBytes(sizes.tinySize)}, 16 at a time`,
      floors: {
        floor: BARE_BATCH,
        floorChecked: BARE_BATCH_CHECKED,
        wireChecked: [BARE_BATCH_CHECKED, '--wire'],
      },
    });
  } finally {
    await server.close();
    rmSync(storeDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * Case 3: one large upload, `mission-data upload <path>` (which asks `/upload` for the signed URL, then PUTs)
 * against curl to a signed URL fetched beforehand: with the checksum (the tool's default) the reference is the
 * script that gives the same guarantee, `openssl md5 -binary FILE | base64` then `curl -T FILE -H "Content-MD5:
 * …"`, timed together; with `--no-checksum` it is plain `curl -T`. Each run stores a new version of the file
 * (hard links of one source file), and the previous run's object is removed from the store, untimed.
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
  // An empty Expect header: curl otherwise waits for "100 Continue" before a large body.
  const curlPut = ['curl', '-sS', '-f', '-H', 'Expect:'];
  const signed = () => {
    const { path, url } = signedUrls.shift();
    return [path, url];
  };
  const runs = [
    {
      name: 'tool',
      make: () =>
        tool([
          'upload',
          nextFile().path,
          '--url',
          context.server.url,
          ...(checksum ? [] : ['--no-checksum']),
        ]),
    },
    {
      name: 'reference',
      make: () => {
        const [path, url] = signed();
        if (!checksum) return command('curl', 'curl', [...curlPut.slice(1), '-T', path, url]);
        // `exec`: curl takes the shell's place, so that a run killed for taking too long leaves nothing behind.
        const script =
          'md5=$(openssl md5 -binary "$1" | base64) && [ -n "$md5" ] && ' +
          `exec ${curlPut.join(' ')} -H "Content-MD5: $md5" -T "$1" "$2"`;
        return command('openssl md5 + curl', 'sh', ['-c', script, 'sh', path, url]);
      },
    },
  ];
  // Without the checksum, the floor of a Node upload in the same rounds: a raw-socket PUT to a URL fetched
  // beforehand (bench/lib/bare-upload.js), as curl's is.
  if (!checksum) {
    runs.push({
      name: 'floorPut',
      make: () => command(LABELS.floorPut, process.execPath, [BARE_UPLOAD, ...signed().reverse()]),
    });
  }
  const results = await compareRuns({
    repetitions: context.sizes.repetitions,
    prepare: async (which) => {
      for (const path of stored) rmSync(path, { force: true });
      stored = [];
      if (which !== 'tool') {
        const file = nextFile();
        const response = await fetch(`${context.server.url}/upload/${file.key}`);
        const envelope = await response.json();
        if (envelope.statusCode !== 200) throw new Error(`/upload/${file.key}: ${JSON.stringify(envelope)}`);
        signedUrls.push({ path: file.path, url: envelope.body });
      }
    },
    runs,
  });
  for (const path of stored) rmSync(path, { force: true });
  const label = `3. upload of one file of ${formatBytes(size)}${checksum ? ' (Content-MD5)' : ', `--no-checksum`'}`;
  const time = (ms) => timeAndSpeed(size, ms);
  return {
    ...ownRow(results, label, time),
    floorPut: checksum ? undefined : againstFloor(results, label, time, 'floorPut'),
  };
}

/**
 * Case 3h: the hashing alone. `openssl md5 -binary FILE` against the library's `md5Base64` (what `upload`
 * runs before sending) in a Node process of its own; both wall times include their process's start.
 */
async function hashing(context) {
  const size = context.sizes.upload;
  const result = await compare({
    repetitions: context.sizes.hashRepetitions,
    makeTool: () =>
      command('mission-data md5Base64', process.execPath, [HASH_FILE, context.upload.source], {
        peakRss: false,
      }),
    makeReference: () => command('openssl md5', 'openssl', ['md5', '-binary', context.upload.source]),
  });
  return caseResult(
    result,
    [
      `3h. MD5 of one file of ${formatBytes(size)} alone`,
      timeAndSpeed(size, result.toolMs),
      timeAndSpeed(size, result.referenceMs),
    ],
    '–',
  );
}

/**
 * The floors timed in the runs of cases 1 and 2, as a sentence: what any Node client could do on the machine
 * (raw sockets), and what one on undici does, so that the distance from mission-data to curl can be told apart
 * from Node's own.
 */
function floorNote(large, manySmall) {
  const ratio = (result, ms) => `${(result.referenceMs / ms).toFixed(2)}× curl`;
  const optional = (result, ms, words) =>
    ms === undefined ? '' : `, ${words} ${seconds(ms)} s (${ratio(result, ms)})`;
  const each = (result) =>
    `${result.label}: raw ${seconds(result.floorMs)} s (${ratio(result, result.floorMs)})` +
    optional(result, result.floorCrcMs, 'raw with CRC-32') +
    optional(result, result.floorCheckedMs, 'raw doing what mission-data must') +
    optional(result, result.wireCheckedMs, "the same on mission-data's wire client") +
    optional(result, result.undiciMs, 'undici');
  return (
    'Floors: the interleaved runs of cases 1, 2 and 2b also timed bare clients that do nothing else mission-data ' +
    'does (no checksum, no part file, no name, folder or link checks, no record): bench/lib/bare-download.js and ' +
    'bare-batch.js on raw `net`/`tls` sockets reading into one reused buffer (`onread`) and writing each read ' +
    'with `writeSync` (the floor of any Node client here; in case 1 also with the CRC-32 of every byte, the floor ' +
    'of one that verifies what the reference server states); in cases 2 and 2b bench/lib/bare-batch-checked.js, ' +
    'the same loop doing per file what mission-data must (a look at the destination, its folder made once and ' +
    'looked at for a link, a part file opened with O_EXCL and O_NOFOLLOW, the CRC-32 checked against the stated ' +
    "one, the part's fstat and rename, a record line, written 64 at a time), and that loop again with `--wire` on " +
    "mission-data's own wire client (bench/lib/wire-get.js: what its HTTP layer costs, without the layers above " +
    'it); and bench/lib/bare-undici-download.js ' +
    "and bare-undici-batch.js on undici's `request` (a reference: their start-up loads undici whole). " +
    'Case 3 without the checksum also timed bench/lib/bare-upload.js, the floor of a Node upload: a raw-socket PUT ' +
    'to a URL fetched beforehand (as curl is given one), the file read 64 KiB at a time with `readSync` and each ' +
    'read written as soon as the socket took the one before. ' +
    `${[...large, ...manySmall].map(each).join('; ')}.`
  );
}

/** Runs cases 1-3 and returns their markdown section, goals and the tool's peak memory per case. */
export async function run({ quick = false, commands = {}, quiet = false } = {}) {
  const sizes = quick ? SIZES.quick : SIZES.full;
  const workDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-transfer-'));
  const batchDir = batchFolder('mission-data-bench-batch-');
  const storeDir = join(workDir, 'store');
  let server;
  let secureServer;
  const notes = [];
  try {
    for (const size of sizes.large) writeLargeFile(join(storeDir, ...largeKey(size).split('/')), size);
    const small = await generateStore(storeDir, { count: sizes.smallCount, size: sizes.smallSize });
    const tls = makeCertificate(workDir);
    server = await startServerProcess(storeDir);
    secureServer = await startServerProcess(storeDir, tls);
    await touchObjects(server.url, [...sizes.large.map(largeKey), ...small.keys]);
    const context = {
      sizes,
      workDir,
      storeDir,
      server,
      secureServer,
      tls,
      small,
      outDir: join(workDir, 'out'),
      batchDir,
      batchOutDir: join(batchDir, 'out'),
    };
    const large = [];
    for (const size of sizes.large) large.push(await largeDownload(context, size));
    const largest = large.at(-1);
    const secureLarge = await largeDownload(context, sizes.large.at(-1), true);
    const firstBytes = await firstByteOnDisk(context, sizes.large.at(-1));
    const manySmall = await manySmallDownloads(context);
    const secureSmall = await manySmallDownloads(context, true);
    const manyTiny = await manyTinyDownloads(context);
    const source = join(workDir, 'upload-source');
    writeLargeFile(source, sizes.upload);
    context.upload = { source, dataDir: join(workDir, 'upload-data'), serial: 0 };
    let upload;
    if (commands.openssl) upload = await largeUpload(context, { checksum: true });
    else
      notes.push(
        'openssl was not found on the PATH: the checksummed upload (case 3, Content-MD5) was skipped.',
      );
    const uploadNoChecksum = await largeUpload(context, { checksum: false });
    let hashed;
    if (!commands.openssl) {
      // Noted above.
    } else if (await loadMd5Base64()) hashed = await hashing(context);
    else notes.push('dist/upload/source.js has no md5Base64: the hashing row (3h) was skipped.');
    const all = [...large, secureLarge, manySmall, secureSmall, manyTiny, upload, uploadNoChecksum].filter(
      Boolean,
    );
    const withFloors = (result) => [
      result,
      result.floor,
      result.floorCrc,
      result.floorChecked,
      result.wireChecked,
      result.undici,
    ];
    const rows = [
      ...large.flatMap(withFloors),
      ...withFloors(secureLarge),
      ...withFloors(manySmall),
      ...withFloors(secureSmall),
      ...withFloors(manyTiny),
      upload,
      uploadNoChecksum,
      uploadNoChecksum.floorPut,
      hashed,
    ]
      .filter((result) => result?.row)
      .map((result) => result.row);
    const memoryGrowth = (largest?.peakRss ?? 0) / (large[0]?.peakRss ?? 1) - 1;
    const firstByteGap =
      Math.max(...firstBytes.variants.map((variant) => variant.ms)) - firstBytes.referenceMs;
    const goals = [
      cpuGoal(
        `${largest.label}, verified by CRC-32: CPU against curl (which verifies nothing)`,
        largest.toolCpuMs,
        largest.referenceCpuMs,
        1.5,
      ),
      cpuGoal(
        `${manySmall.label}: CPU against curl --parallel 16`,
        manySmall.toolCpuMs,
        manySmall.referenceCpuMs,
        1.5,
      ),
      cpuGoal(
        `${manyTiny.label}: CPU against curl --parallel 16`,
        manyTiny.toolCpuMs,
        manyTiny.referenceCpuMs,
        1.5,
      ),
      ...(upload
        ? [
            cpuGoal(
              `${upload.label}: CPU against openssl md5 + curl -T`,
              upload.toolCpuMs,
              upload.referenceCpuMs,
              1.1,
            ),
          ]
        : []),
      wallGoal(`${largest.label}: speed against curl`, largest.ratio, 1, quiet),
      wallGoal(`${secureLarge.label}: speed against curl`, secureLarge.ratio, 1, quiet),
      wallGoal(`${manySmall.label}: speed against curl --parallel 16`, manySmall.ratio, 1, quiet),
      wallGoal(`${manyTiny.label}: speed against curl --parallel 16`, manyTiny.ratio, 1, quiet),
      wallGoal(
        `${largest.label}: speed within 5% of the ${LABELS.floorCrc}`,
        largest.floorCrc.ratio,
        0.95,
        quiet,
      ),
      wallGoal(
        `${secureLarge.label}: speed within 5% of the ${LABELS.floorCrc}`,
        secureLarge.floorCrc.ratio,
        0.95,
        quiet,
      ),
      wallGoal(
        `${manySmall.label}: speed within 5% of the ${LABELS.floorChecked}`,
        manySmall.floorChecked.ratio,
        0.95,
        quiet,
      ),
      wallGoal(
        `${manyTiny.label}: speed within 5% of the ${LABELS.floorChecked}`,
        manyTiny.floorChecked.ratio,
        0.95,
        quiet,
      ),
      ...(upload
        ? [wallGoal(`${upload.label}: speed against openssl md5 + curl -T`, upload.ratio, 0.95, quiet)]
        : []),
      wallGoal(`${uploadNoChecksum.label}: speed against curl -T`, uploadNoChecksum.ratio, 0.95, quiet),
      {
        goal: `Case 1f: first byte of ${formatBytes(firstBytes.size)} on disk within 200 ms of curl's, whatever --connections`,
        measured: `${firstBytes.variants.map((variant) => `${variant.label} ${Math.round(variant.ms)} ms`).join(', ')} against ${Math.round(firstBytes.referenceMs)} ms (+${Math.round(firstByteGap)} ms at most)`,
        met: firstByteGap <= 200,
      },
      {
        goal: `Case 1: peak memory the same at ${formatBytes(sizes.large[0])} and ${formatBytes(sizes.large.at(-1))} (within 10%)`,
        measured: `${memoryGrowth >= 0 ? '+' : ''}${(memoryGrowth * 100).toFixed(1)}%`,
        met: Math.abs(memoryGrowth) <= 0.1,
        memory: true,
      },
    ];
    const checksumCost =
      upload && hashed
        ? `Within the upload, the checksum costs ${seconds(upload.toolMs - uploadNoChecksum.toolMs)} s ` +
          '(median with Content-MD5 less median with `--no-checksum`); hashing alone takes mission-data ' +
          `${seconds(hashed.toolMs)} s and openssl ${seconds(hashed.referenceMs)} s (3h).`
        : undefined;
    const markdown = [
      '### Transfers on loopback: mission-data against curl',
      '',
      `Median of ${sizes.repetitions} interleaved runs of each (after one warm-up run of each; every object was ` +
        'read once before), on one reference server (`mission-data serve`, a process of its own) on 127.0.0.1. ' +
        "Times are wall times of the whole command, start-up included; every run's output is checked to be " +
        'complete. Speed ratio = reference time / mission-data time (above 1.0: mission-data is faster). CPU is the ' +
        'median of user + system seconds (in brackets, apart) of the whole command, its threads and children ' +
        "included (bash's `times` after it); CPU ratio = mission-data's / the reference's (below 1.0: mission-data " +
        `spends less). Case 2b: ${sizes.tinyRepetitions} runs of each, on a store and server of its own. Peak ` +
        'memory is the largest resident set of the mission-data process over its runs.',
      '',
      'HTTPS rows: the same store served by a second `mission-data serve --tls-cert --tls-key` (a self-signed ' +
        'certificate for 127.0.0.1 made by openssl), trusted through NODE_EXTRA_CA_CERTS by the Node commands ' +
        'and `--cacert` by curl.',
      '',
      'References: case 1 `curl -sS -f -L -o FILE URL/download/KEY`; cases 2 and 2b `curl -sS -f -L --parallel ' +
        '--parallel-max 16 -K LIST` (one url/output pair per file); case 3 with Content-MD5 `curl -sS -f -H ' +
        '"Expect:" -H "Content-MD5: $(openssl md5 -binary FILE | base64)" -T FILE SIGNED_URL` (hashing and ' +
        'sending timed together), with `--no-checksum` the same without the header and its hashing; the signed URL ' +
        'is fetched beforehand (mission-data asks `/upload` for it within its time). 3h: `openssl md5 -binary ' +
        `FILE\` against \`node bench/lib/hash-file.js FILE\` (the library's \`md5Base64\`, ${sizes.hashRepetitions} ` +
        'runs each).',
      '',
      floorNote([...large, secureLarge], [manySmall, secureSmall, manyTiny]),
      '',
      `The batch cases (2, on HTTP and HTTPS, and 2b) write into ${batchDir} (bench/lib/files.js \`batchFolder\`: in memory where the system ` +
        'has a folder there for anyone, as /dev/shm on Linux; MISSION_DATA_BENCH_BATCH_DIR chooses another), so ' +
        'that each command is timed for its own work rather than for what the disk does with the files the runs ' +
        'before it deleted.',
      '',
      `Case 1f: the first byte of the ${formatBytes(firstBytes.size)} file on disk, from the command's start ` +
        `(bench/lib/first-byte.js polls the output folder every millisecond), median of ${firstBytes.runs} ` +
        `interleaved runs of each: mission-data ${firstBytes.variants.map((variant) => `${Math.round(variant.ms)} ms (${variant.label})`).join(', ')}; curl ` +
        `${Math.round(firstBytes.referenceMs)} ms.`,
      ...(checksumCost ? ['', checksumCost] : []),
      ...(notes.length > 0 ? ['', ...notes.map((note) => `Note: ${note}`)] : []),
      '',
      markdownTable(
        [
          'Case',
          'mission-data',
          'reference',
          'Speed ratio',
          'CPU: mission-data',
          'CPU: reference',
          'CPU ratio',
          'Peak memory (mission-data)',
          'Runs: fastest–slowest (mission-data; reference)',
        ],
        rows,
      ),
    ].join('\n');
    for (const note of notes) console.error(`Note: ${note}`);
    const peaks = all.map((result) => ({ label: result.label, bytes: result.peakRss }));
    return { markdown, goals, peaks };
  } finally {
    await server?.close();
    await secureServer?.close();
    rmSync(workDir, { recursive: true, force: true });
    rmSync(batchDir, { recursive: true, force: true });
  }
}
