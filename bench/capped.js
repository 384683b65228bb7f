/**
 * Benchmark cases 6-7: downloads over a capped link. The reference server runs behind the bench's shaping proxy
 * (bench/lib/shaping-proxy.js: a rate cap per connection and an added delay per request), as a far-away
 * service and object store would be: one connection alone cannot fill the link, so a download gains by opening
 * several. `mission-data download` is set against `curl -L -o`, `aria2c -x 8 -s 8` and
 * `aria2c -x 16 -s 16` (one large file) and
 * against `curl --parallel --parallel-max 16` (many small files).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFiles, writeLargeFile } from './lib/files.js';
import { command, compareRuns, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { startShapingProxyProcess } from './lib/shaping-proxy.js';
import { formatBytes, markdownTable, seconds, spread, wallGoal } from './lib/stats.js';
import { generateStore, largeKey } from './lib/store.js';
import { touchObjects } from './lib/warm-up.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/**
 * Sizes of a full run, and of `--quick`. At the cap one curl run of the large file takes size / rate (25.6 s
 * for 1 GiB at 40 MiB/s), so curl runs fewer times than the commands that open several connections, and the
 * large case has no warm-up run (the objects are read once beforehand instead).
 */
export const SIZES = {
  full: {
    large: GIB,
    smallCount: 1000,
    smallSize: 64 * 1024,
    largeRepetitions: { tool: 5, curl: 3, aria2c: 5 },
    smallRepetitions: 5,
  },
  quick: {
    large: 64 * MIB,
    smallCount: 100,
    smallSize: 64 * 1024,
    largeRepetitions: { tool: 2, curl: 2, aria2c: 2 },
    smallRepetitions: 2,
  },
};

const LABELS = {
  tool: 'mission-data',
  tool8: 'mission-data --connections 8',
  toolAuto: 'mission-data --connections auto',
  toolAutoKept: 'mission-data --connections auto, its data root kept between runs',
  curl: 'curl',
  aria2c8: 'aria2c -x 8',
  aria2c16: 'aria2c -x 16',
};
const mibPerSecond = (bytes, ms) => (bytes / MIB / (ms / 1000)).toFixed(0);
const timeAndSpeed = (bytes, ms) => `${seconds(ms)} s (${mibPerSecond(bytes, ms)} MiB/s)`;

/**
 * The server builds the URLs it hands out from the request's Host header, which the proxy forwards unchanged:
 * check that a `/download` through the proxy redirects back through it, or the cap would apply to nothing.
 */
async function checkRedirectsThroughProxy(proxyUrl, key) {
  const answer = await fetch(`${proxyUrl}/download/${key}`, { redirect: 'manual' });
  await answer.arrayBuffer();
  const location = answer.headers.get('location') ?? '';
  if (answer.status !== 302 || !location.startsWith(`${proxyUrl}/objects/`)) {
    throw new Error(
      `GET ${proxyUrl}/download/${key} through the shaping proxy answered ${answer.status} with Location ` +
        `${JSON.stringify(location)}: the object URLs must point back through the proxy (${proxyUrl}).`,
    );
  }
}

/** Case 6: one large file over the capped link, against curl and (when installed) aria2c -x 8 and -x 16. */
async function largeDownload(context) {
  const size = context.sizes.large;
  const key = largeKey(size);
  const url = `${context.proxy.url}/download/${key}`;
  const repetitions = context.sizes.largeRepetitions;
  const download =
    (...extra) =>
    () =>
      tool(['download', key, '--url', context.proxy.url, '--data-dir', context.outDir, ...extra]);
  // A data root used run after run, as a user's is: its state folder (what `auto` measured) is kept.
  const keptDir = join(context.workDir, 'kept');
  const runs = [
    { name: 'tool', repetitions: repetitions.tool, make: download() },
    // The number of connections fixed, for the default to be set against it by name.
    { name: 'tool8', repetitions: repetitions.tool, make: download('--connections', '8') },
    // Measured connections, starting from 8: set against the default where a cap rewards more.
    { name: 'toolAuto', repetitions: repetitions.tool, make: download('--connections', 'auto') },
    {
      name: 'toolAutoKept',
      repetitions: repetitions.tool,
      make: () =>
        tool(['download', key, '--url', context.proxy.url, '--data-dir', keptDir, '--connections', 'auto']),
    },
    {
      name: 'curl',
      repetitions: repetitions.curl,
      make: () =>
        command('curl', 'curl', [
          '-sS',
          '-f',
          '-L',
          '--create-dirs',
          '-o',
          join(context.outDir, 'large'),
          url,
        ]),
    },
  ];
  if (context.commands.aria2c) {
    for (const split of [8, 16]) {
      runs.push({
        name: `aria2c${split}`,
        repetitions: repetitions.aria2c,
        make: () =>
          command('aria2c', 'aria2c', [
            '-q',
            '-x',
            String(split),
            '-s',
            String(split),
            '--allow-overwrite=true',
            '--auto-file-renaming=false',
            '-d',
            context.outDir,
            '-o',
            'large',
            url,
          ]),
      });
    }
  }
  const results = await compareRuns({
    runs,
    warmup: false,
    prepare: (name) => {
      rmSync(context.outDir, { recursive: true, force: true });
      mkdirSync(keptDir, { recursive: true });
      for (const entry of readdirSync(keptDir)) {
        if (name !== 'toolAutoKept' || entry !== '.mission-data') {
          rmSync(join(keptDir, entry), { recursive: true, force: true });
        }
      }
    },
    verify: (name) =>
      checkFiles(LABELS[name], name === 'toolAutoKept' ? keptDir : context.outDir, { count: 1, size }),
  });
  const { tool: mine } = results;
  const rows = [];
  const ratios = {};
  for (const reference of ['tool8', 'toolAuto', 'toolAutoKept', 'curl', 'aria2c8', 'aria2c16']) {
    const theirs = results[reference];
    if (!theirs) continue;
    ratios[reference] = theirs.ms / mine.ms;
    rows.push([
      `6. one file of ${formatBytes(size)}, capped`,
      timeAndSpeed(size, mine.ms),
      {
        tool8: '`mission-data --connections 8`',
        toolAuto: '`mission-data --connections auto`',
        toolAutoKept: '`mission-data --connections auto`, data root kept between runs',
        curl: '`curl -L -o`',
        aria2c8: '`aria2c -x 8 -s 8`',
        aria2c16: '`aria2c -x 16 -s 16`',
      }[reference],
      timeAndSpeed(size, theirs.ms),
      ratios[reference].toFixed(2),
      formatBytes(mine.peakRss),
      `${spread(mine.runs)}; ${spread(theirs.runs)}`,
    ]);
  }
  return { rows, ratios, peakRss: mine.peakRss, label: `6. one file of ${formatBytes(size)}, capped` };
}

/** Case 7: many small files over the capped link, 16 at a time, against `curl --parallel --parallel-max 16`. */
async function manySmallDownloads(context) {
  const { keys } = context.small;
  const curlConfig = join(context.workDir, 'small.curl');
  writeFileSync(
    curlConfig,
    keys
      .map((key, i) => `url = "${context.proxy.url}/download/${key}"\noutput = "${context.outDir}/f${i}"\n`)
      .join(''),
  );
  const results = await compareRuns({
    repetitions: context.sizes.smallRepetitions,
    runs: [
      {
        name: 'tool',
        make: () =>
          tool(
            [
              'download',
              '-',
              '--concurrency',
              '16',
              '--url',
              context.proxy.url,
              '--data-dir',
              context.outDir,
            ],
            { input: `${keys.join('\n')}\n` },
          ),
      },
      {
        name: 'curl',
        make: () =>
          command('curl', 'curl', [
            '-sS',
            '-f',
            '-L',
            '--parallel',
            '--parallel-max',
            '16',
            '-K',
            curlConfig,
          ]),
      },
    ],
    prepare: () => {
      rmSync(context.outDir, { recursive: true, force: true });
      mkdirSync(context.outDir, { recursive: true });
    },
    verify: (name) =>
      checkFiles(LABELS[name], context.outDir, { count: keys.length, size: context.sizes.smallSize }),
  });
  const { tool: mine, curl } = results;
  const filesPerSecond = (ms) => (keys.length / (ms / 1000)).toFixed(0);
  const label = `7. ${keys.length} files of ${formatBytes(context.sizes.smallSize)}, 16 at a time, capped`;
  return {
    label,
    ratio: curl.ms / mine.ms,
    peakRss: mine.peakRss,
    row: [
      label,
      `${seconds(mine.ms)} s (${filesPerSecond(mine.ms)} files/s)`,
      '`curl --parallel --parallel-max 16`',
      `${seconds(curl.ms)} s (${filesPerSecond(curl.ms)} files/s)`,
      (curl.ms / mine.ms).toFixed(2),
      formatBytes(mine.peakRss),
      `${spread(mine.runs)}; ${spread(curl.runs)}`,
    ],
  };
}

/** Runs cases 6-7 and returns their markdown section, goals and the tool's peak memory per case. */
export async function run({ quick = false, commands = {}, quiet = false } = {}) {
  const sizes = quick ? SIZES.quick : SIZES.full;
  const workDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-capped-'));
  const storeDir = join(workDir, 'store');
  let server;
  let proxy;
  try {
    writeLargeFile(join(storeDir, ...largeKey(sizes.large).split('/')), sizes.large);
    const small = await generateStore(storeDir, { count: sizes.smallCount, size: sizes.smallSize });
    server = await startServerProcess(storeDir);
    proxy = await startShapingProxyProcess({ target: server.url });
    await checkRedirectsThroughProxy(proxy.url, largeKey(sizes.large));
    await touchObjects(server.url, [largeKey(sizes.large), ...small.keys]);
    const context = { sizes, workDir, server, proxy, small, commands, outDir: join(workDir, 'out') };
    const large = await largeDownload(context);
    const manySmall = await manySmallDownloads(context);
    const notes = [];
    if (!commands.aria2c)
      notes.push('aria2c was not found on the PATH: its row and goal were skipped (apt-get install aria2).');
    for (const note of notes) console.error(`Note: ${note}`);
    const goals = [
      wallGoal(`${large.label}: speed against curl`, large.ratios.curl, 4, quiet),
      ...(large.ratios.aria2c16 === undefined
        ? []
        : [wallGoal(`${large.label}: speed against aria2c -x 16 -s 16`, large.ratios.aria2c16, 1, quiet)]),
      wallGoal(`${manySmall.label}: speed against curl --parallel 16`, manySmall.ratio, 1, quiet),
    ];
    const cap = `${(proxy.rate / MIB).toFixed(0)} MiB/s`;
    const repetitions = sizes.largeRepetitions;
    const markdown = [
      `### Transfers over a capped link (${cap} per connection, +${proxy.delayMs} ms per request)`,
      '',
      "The reference server (`mission-data serve`) runs behind the bench's shaping proxy (bench/lib/shaping-proxy.js, " +
        `a process of its own on 127.0.0.1): every connection is capped at ${cap} in each direction and every ` +
        `request, API and object routes alike, waits ${proxy.delayMs} ms before it is passed on. The proxy forwards ` +
        'the Host header, so the object URLs the server hands out point back through it (checked before timing). ' +
        `At the cap one connection needs ${seconds((sizes.large / proxy.rate) * 1000)} s for the large file.`,
      '',
      `Medians of interleaved runs. Case 6: mission-data ${repetitions.tool} runs, curl ${repetitions.curl}` +
        `${commands.aria2c ? `, aria2c ${repetitions.aria2c} of each` : ''} (no warm-up run). Case 7: ` +
        `${sizes.smallRepetitions} runs of each after one warm-up run of each. Every object was read once before timing; ` +
        "every run's output is checked to be complete. Commands: `curl -sS -f -L -o FILE URL/download/KEY`, " +
        '`aria2c -q -x 8 -s 8 -d DIR -o FILE URL/download/KEY` (and `-x 16 -s 16`), `curl -sS -f -L --parallel --parallel-max 16 -K ' +
        'LIST`; mission-data as in cases 1 and 2. Speed ratio = reference time / mission-data time.',
      ...(notes.length > 0 ? ['', ...notes.map((note) => `Note: ${note}`)] : []),
      '',
      markdownTable(
        [
          'Case',
          'mission-data',
          'Reference',
          'Reference time',
          'Speed ratio',
          'Peak memory (mission-data)',
          'Runs: fastest–slowest (mission-data; reference)',
        ],
        [...large.rows, manySmall.row],
      ),
    ].join('\n');
    const peaks = [large, manySmall].map((result) => ({ label: result.label, bytes: result.peakRss }));
    return { markdown, goals, peaks };
  } finally {
    await proxy?.close();
    await server?.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}
