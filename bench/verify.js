/**
 * `mission-data verify` over 2 GiB in 2,000 files and over one 2 GiB file: with MD5 records (the files downloaded
 * from the backends, whose s3rver states only the ETag) against `xargs -P2 md5sum` of the same files, and with
 * CRC-32 records (downloaded from the reference server, which states `x-amz-checksum-crc32`) beside them, and the
 * MD5 root again with the archive far away (behind the shaping proxy, every request held FAR_DELAY_MS); wall
 * and CPU, interleaved runs. The files are read from the page cache by every command alike (they were just
 * written), so this measures the hashing and the work around it, not the disk. The floor of a Node `verify`
 * (bench/lib/bare-verify.js: the record read, the root listed, two threads hashing and comparing, nothing else)
 * runs over the MD5 root in the same rounds.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from './backends.js';
import { writeLargeFile } from './lib/files.js';
import { command, compareRuns, execute, tool } from './lib/measure.js';
import { startListeningProcess } from './lib/server.js';
import { startShapingProxyProcess } from './lib/shaping-proxy.js';
import { cpuSeconds, formatBytes, markdownTable, seconds, wallGoal } from './lib/stats.js';

const MIB = 1024 * 1024;
/** The archive far away: each request through the shaping proxy waits this long (a distant service's round trip). */
const FAR_DELAY_MS = 100;
const BIN = new URL('../bin/mission-data.js', import.meta.url).pathname;
const BARE_VERIFY = new URL('./lib/bare-verify.js', import.meta.url).pathname;

/** The storage path of the `index`th file of a case: one a day from 2020-01-01 (the index is shared by the cases). */
function keyOf(descriptor, index) {
  const day = new Date(Date.UTC(2020, 0, 1 + index)).toISOString().slice(0, 10).replaceAll('-', '');
  return `imap/mag/l1a/${day.slice(0, 4)}/${day.slice(4, 6)}/imap_mag_l1a_${descriptor}_${day}_${day}_v01-00.cdf`;
}

function serve(store, env) {
  return startListeningProcess(
    [BIN, 'serve', '--store', store, '--port', '0', '--quiet'],
    `serve --store ${store}`,
    env,
  );
}

/**
 * One case: `count` files of `size` bytes uploaded to both stores, downloaded from each into a data root of its
 * own (MD5 records from s3rver, CRC-32 from the folder store), then verified, against `xargs -P2 md5sum`.
 */
async function verifyCase({ count, size, repetitions, env, work }) {
  const sent = join(work, 'sent');
  const descriptor = count === 1 ? 'benchone' : 'benchmany';
  const keys = Array.from({ length: count }, (_, index) => keyOf(descriptor, index));
  for (const key of keys) writeLargeFile(join(sent, ...key.split('/')), size);
  const roots = { md5: join(work, 'md5-root'), crc32: join(work, 'crc32-root') };
  const backendEnv = { ...process.env, ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const { MISSION_DATA_INDEX_URL: _, ...folderEnv } = backendEnv;
  const s3 = await serve(`s3://archive/verify-${count}`, backendEnv);
  const folder = await serve(join(work, 'store'), folderEnv);
  let far;
  try {
    const scope = ['--instrument', 'mag', '--descriptor', descriptor, '--quiet'];
    for (const [server, root, serveEnv] of [
      [s3, roots.md5, backendEnv],
      [folder, roots.crc32, folderEnv],
    ]) {
      await execute(
        tool(['upload', ...keys, '--url', server.url, '--data-dir', sent, '--quiet'], { env: serveEnv }),
      );
      await execute(tool(['download', ...scope, '--url', server.url, '--data-dir', root], { env: serveEnv }));
    }
    const verify = (server, root, serveEnv) => () =>
      tool(['verify', ...scope, '--url', server.url, '--data-dir', root], { env: serveEnv });
    // The same MD5 root with the archive far away: its answer comes late, and the files are hashed meanwhile.
    far = await startShapingProxyProcess({ target: s3.url, delayMs: FAR_DELAY_MS });
    const md5sum = 'find "$1" -name "*.cdf" -type f -print0 | xargs -0 -P2 -n 64 md5sum > /dev/null';
    const results = await compareRuns({
      repetitions,
      runs: [
        { name: 'md5', make: verify(s3, roots.md5, backendEnv) },
        { name: 'md5Far', make: verify(far, roots.md5, backendEnv) },
        { name: 'crc32', make: verify(folder, roots.crc32, folderEnv) },
        { name: 'reference', make: () => command('xargs -P2 md5sum', 'sh', ['-c', md5sum, 'sh', roots.md5]) },
        { name: 'floor', make: () => command('bare verify', process.execPath, [BARE_VERIFY, roots.md5]) },
      ],
    });
    return { count, size, repetitions, ...results };
  } finally {
    await far?.close();
    await s3.close();
    await folder.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function run({ quick = false, quiet = false } = {}) {
  const backends = await startBackends();
  const cases = [];
  try {
    const total = quick ? 16 * MIB : 2048 * MIB;
    for (const count of quick ? [16, 1] : [2000, 1]) {
      const work = await mkdtemp(join(tmpdir(), 'mission-bench-verify-'));
      cases.push(
        await verifyCase({
          count,
          size: Math.floor(total / count),
          repetitions: quick ? 1 : 5,
          env: backends.env,
          work,
        }),
      );
    }
  } finally {
    await backends.stop();
  }
  const goals = [];
  const rows = [];
  const peaks = [];
  for (const found of cases) {
    const what = `${found.count.toLocaleString('en')} ${found.count === 1 ? 'file' : 'files'} of ${formatBytes(found.size)}`;
    const label = `Verify ${what}`;
    goals.push(
      wallGoal(
        `${label}, MD5 records: speed against xargs -P2 md5sum`,
        found.reference.ms / found.md5.ms,
        0.9,
        quiet,
      ),
      wallGoal(`${label}: CRC-32 records against MD5 records`, found.md5.ms / found.crc32.ms, 1, quiet),
      wallGoal(
        `${label}, MD5 records, the archive ${FAR_DELAY_MS} ms away: speed against xargs -P2 md5sum`,
        found.reference.ms / found.md5Far.ms,
        0.9,
        quiet,
      ),
    );
    peaks.push({ label: `${label}, MD5 records`, bytes: found.md5.peakRss });
    rows.push([
      what,
      `${seconds(found.md5.ms)} s`,
      `${seconds(found.md5Far.ms)} s (${(found.reference.ms / found.md5Far.ms).toFixed(2)})`,
      `${seconds(found.crc32.ms)} s`,
      `${seconds(found.reference.ms)} s`,
      (found.reference.ms / found.md5.ms).toFixed(2),
      `${seconds(found.floor.ms)} s (${(found.reference.ms / found.floor.ms).toFixed(2)})`,
      (found.floor.ms / found.md5.ms).toFixed(2),
      cpuSeconds(found.md5.runs),
      cpuSeconds(found.crc32.runs),
      cpuSeconds(found.reference.runs),
      cpuSeconds(found.floor.runs),
    ]);
  }
  const markdown = [
    '### Verify: a data root hashed against its records',
    '',
    `\`mission-data verify --instrument mag\` over ${formatBytes(cases[0]?.count * cases[0]?.size || 0)}, with MD5 ` +
      'records (downloaded from s3rver, which states only the ETag) and with CRC-32 records (downloaded from the ' +
      'reference server), against `find | xargs -0 -P2 -n 64 md5sum` of the MD5 root; the files are in the page ' +
      `cache for every command alike. The MD5 root is verified a second time with the archive ${FAR_DELAY_MS} ms ` +
      'away (behind bench/lib/shaping-proxy.js, which holds every request that long): its query answers late, ' +
      'and the files the record vouches for are hashed meanwhile. The floor is bench/lib/bare-verify.js over the MD5 ' +
      'root: a Node process that reads the record, lists the root and hashes each file on two threads, comparing ' +
      "its digest with the record's; no query, no naming rules, no record written (speed ratio: md5sum's time " +
      `against its own). Median of ${cases[0]?.repetitions} interleaved runs of each after a warm-up run.`,
    '',
    markdownTable(
      [
        'case',
        'MD5 records',
        `MD5 records, archive ${FAR_DELAY_MS} ms away (speed ratio)`,
        'CRC-32 records',
        'xargs -P2 md5sum',
        'speed ratio (MD5)',
        'floor: bare verify, 2 threads (speed ratio)',
        'MD5 records against the floor',
        'CPU: MD5',
        'CPU: CRC-32',
        'CPU: md5sum',
        'CPU: floor',
      ],
      rows,
    ),
    '',
  ].join('\n');
  return { markdown, goals, peaks };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write((await run({ quick: process.argv.includes('--quick') })).markdown);
}
