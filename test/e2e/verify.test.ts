/**
 * `verify` end to end: a byte flipped in a file untouched since its download (times restored) and a hand-copied
 * file with other bytes are both found corrupt where `status` sees nothing, `--repair` brings back the archive's
 * bytes, and the next pass finds all ok; the record remembers each pass; `--strict`, JSON, a file that vanishes
 * mid-pass and the date option.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { AbortedError } from '../../src/core/errors.js';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import type { VerifyEntry } from '../../src/sync/verify.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';

const TOUCH = unixOnly('touch -r');

const exec = promisify(execFile);
const NAMES = [1, 2, 3, 4, 5].map((day) => scienceName('mag', day));
const pathOf = (name: string) => `imap/mag/l1a/2024/01/${name}`;
const contentOf = (name: string) => bytesFor(name, 100_000 + name.length);
/** Downloaded, then one byte flipped in place with its times put back. */
const FLIPPED = NAMES[0] as string;
/** Never downloaded: copied in by hand, with other bytes of the same size. */
const HAND_COPIED = NAMES[1] as string;
const SCOPE = ['--instrument', 'mag'];

let store: string;
let home: string;
let dataDir: string;
let server: TestServer;

const cli = (args: string[], dir = dataDir, url = server.url) =>
  runCli([...args, '--url', url, '--data-dir', dir], { cwd: home, timeoutMs: 60_000 });
const local = (root: string, name: string) => join(root, ...pathOf(name).split('/'));
const recordLines = async (root: string) =>
  (await readFile(join(root, '.mission-data/verified.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { p: string; at?: number; bad?: string; sum: string });

async function flipOneByte(path: string): Promise<void> {
  const before = await stat(path);
  // touch -r copies times to the nanosecond (utimes takes a double of seconds, which loses the last digits).
  const times = `${path}.times`;
  await exec('touch', ['-r', path, times]);
  const handle = await open(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, 5000);
    byte[0] = (byte[0] as number) ^ 0x01;
    await handle.write(byte, 0, 1, 5000);
  } finally {
    await handle.close();
  }
  await exec('touch', ['-r', times, path]);
  await rm(times);
  const after = await stat(path);
  expect(after.mtimeMs).toBe(before.mtimeMs);
  expect(after.ino).toBe(before.ino);
}

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-verify-store-');
  home = await tempDir('mission-verify-home-');
  dataDir = join(home, 'data');
  for (const name of NAMES) await putFile(store, pathOf(name), contentOf(name));
  server = await startServer({ storeDir: store });
  const fetched = await cli(['download', ...NAMES.filter((name) => name !== HAND_COPIED), '--quiet']);
  expect(fetched.code).toBe(0);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

// The reference server's folder store states CRC-32, which these cases read; on the backends s3rver states only
// the ETag (the S3 cases are in s3-behaviour.test.ts).
describe.skipIf(ON_BACKENDS)('verify of a data root', () => {
  it.skipIf(TOUCH.missing)(
    TOUCH.title(
      'a flipped byte and a hand-copied file: status sees nothing of the flip, verify names both, --repair mends them, then all ok',
    ),
    async () => {
      await flipOneByte(local(dataDir, FLIPPED));
      const handCopy = Buffer.from(contentOf(HAND_COPIED));
      handCopy[10] = (handCopy[10] as number) ^ 0xff;
      await putFile(dataDir, pathOf(HAND_COPIED), handCopy);

      const status = await cli(['status', ...SCOPE]);
      expect(status.stdout).not.toContain(FLIPPED);
      expect(status.code).toBe(0);

      const found = await cli(['verify', ...SCOPE]);
      expect(found.code).toBe(1);
      const lines = found.stdout.trim().split('\n');
      expect(lines).toHaveLength(NAMES.length);
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^corrupt ${pathOf(FLIPPED)} \\(crc32 expected \\S+, got \\S+; its crc32 differs from the one verified\\)$`,
          ),
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^corrupt ${pathOf(HAND_COPIED)} \\(md5 expected [0-9a-f]{32}, got [0-9a-f]{32}; its md5 differs from the archive's \\(download URL\\)\\)$`,
          ),
        ),
      );
      for (const name of NAMES.slice(2)) expect(lines).toContain(`ok ${pathOf(name)}`);
      expect(found.stderr).toMatch(/3 ok, 2 corrupt \(/);

      // The record no longer vouches for the flipped file: status now calls it changed, as verify found it.
      const after = await cli(['status', ...SCOPE]);
      expect(after.stdout).toContain(`changed ${pathOf(FLIPPED)} (verify found its bytes damaged)`);

      const repaired = await cli(['verify', ...SCOPE, '--repair']);
      expect(repaired.code).toBe(0);
      expect(repaired.stdout).toContain(`repaired ${pathOf(FLIPPED)}`);
      expect(repaired.stdout).toContain(`repaired ${pathOf(HAND_COPIED)}`);
      for (const name of [FLIPPED, HAND_COPIED]) {
        expect((await readFile(local(dataDir, name))).equals(contentOf(name))).toBe(true);
      }

      const again = await cli(['verify', ...SCOPE]);
      expect(again.code).toBe(0);
      expect(again.stdout.trim().split('\n')).toEqual(NAMES.map((name) => `ok ${pathOf(name)}`).sort());
      expect((await cli(['status', ...SCOPE])).stdout).toBe('');
    },
  );

  it('the record remembers each pass: appended lines with the time and the checksum, earlier lines kept', async () => {
    const before = await recordLines(dataDir);
    const started = Date.now();
    expect((await cli(['verify', ...SCOPE])).code).toBe(0);
    const lines = await recordLines(dataDir);
    // Appended, never rewritten: every earlier line is still there, in order.
    expect(lines.slice(0, before.length)).toEqual(before);
    const pass = lines.slice(before.length);
    expect(pass.map((line) => line.p).sort()).toEqual(NAMES.map(pathOf).sort());
    for (const line of pass) {
      expect(line.at).toBeGreaterThanOrEqual(started);
      expect(line.sum).toMatch(/^(crc32|md5):[0-9a-f]+$/);
      expect(line.bad).toBeUndefined();
    }
  });

  it('--not-verified-since leaves out files verified since the date', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
    const all = await cli(['verify', ...SCOPE, '--not-verified-since', tomorrow]);
    expect(all.stdout.trim().split('\n')).toHaveLength(NAMES.length);
    const recent = new Date(Date.now() - 60_000).toISOString();
    const none = await cli(['verify', ...SCOPE, '--not-verified-since', recent]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/5 verified since the date given, left out/);
    const bad = await cli(['verify', ...SCOPE, '--not-verified-since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--not-verified-since "yesterday" is not a date/);
  });

  it('--output-format json: one record per file; an extra file is listed, never counted against', async () => {
    const extra = join(dataDir, 'imap/mag/l1a/2024/01/notes.txt');
    await writeFile(extra, 'mine');
    try {
      const run = await cli(['verify', ...SCOPE, '--output-format', 'json']);
      expect(run.code).toBe(0);
      const records = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
      // Written a piece at a time, the text is still the array's, indented as JSON.stringify indents it.
      expect(run.stdout).toBe(`${JSON.stringify(records, null, 2)}\n`);
      expect(records).toHaveLength(NAMES.length + 1);
      expect(records.find((record) => record.status === 'extra')).toMatchObject({
        file_path: 'imap/mag/l1a/2024/01/notes.txt',
      });
      expect(records.find((record) => record.file_path === pathOf(FLIPPED))).toMatchObject({
        status: 'ok',
        algorithm: 'crc32',
        against: 'record',
        expected: null,
        repair: null,
      });
    } finally {
      await rm(extra);
    }
  });

  it('a file that vanishes mid-pass is reported as such and the pass goes on', async () => {
    const client = createClient({ url: server.url, dataDir, env: {}, configFile: join(home, 'none.json') });
    const gone = local(dataDir, NAMES[3] as string);
    try {
      const report = await client.verify(
        { instrument: 'mag' },
        {
          threads: 1,
          onProgress: (progress) => {
            // Measured, nothing hashed yet: the file goes now, before this call returns and the hashing begins.
            if (progress.filesDone === 0 && progress.bytesDone === 0) rmSync(gone, { force: true });
          },
        },
      );
      const byPath = new Map(report.entries.map((entry: VerifyEntry) => [entry.path, entry]));
      expect(byPath.get(pathOf(NAMES[3] as string))).toMatchObject({
        status: 'unreadable',
        reason: 'vanished during the pass',
      });
      expect(report.counts.ok).toBe(NAMES.length - 1);
    } finally {
      await client.close();
      await writeFile(gone, contentOf(NAMES[3] as string));
    }
  });

  it('a recorded file the archive no longer holds is extra, never ok, and the record does not vouch for it anew', async () => {
    // The record vouches for every file, so each may be read while the archive is still being asked; the one the
    // archive no longer holds must still come out extra.
    const dropped = NAMES[4] as string;
    const smaller = await tempDir('mission-verify-smaller-');
    for (const name of NAMES.filter((name) => name !== dropped))
      await putFile(smaller, pathOf(name), contentOf(name));
    const other = await startReferenceServer({
      store: smaller,
      port: 0,
      secret: 'e2e-test-secret-0123456789',
    });
    const client = createClient({ url: other.url, dataDir, env: {}, configFile: join(home, 'none.json') });
    const linesOf = async (path: string) => (await recordLines(dataDir)).filter((line) => line.p === path);
    try {
      const before = await linesOf(pathOf(dropped));
      const kept = await linesOf(pathOf(NAMES[2] as string));
      expect(before.length).toBeGreaterThan(0);
      const report = await client.verify({ instrument: 'mag' }, { threads: 1 });
      const byPath = new Map(report.entries.map((entry: VerifyEntry) => [entry.path, entry]));
      expect(byPath.get(pathOf(dropped))).toMatchObject({ status: 'extra', reason: 'not in the archive' });
      expect(report.counts.ok).toBe(NAMES.length - 1);
      // No new line for the dropped file; one for each file found whole.
      expect(await linesOf(pathOf(dropped))).toEqual(before);
      expect((await linesOf(pathOf(NAMES[2] as string))).length).toBe(kept.length + 1);
    } finally {
      await client.close();
      await other.close();
      await cleanup(smaller);
    }
  });

  it('cancelled: rejects with the entries settled so far, and the record keeps them', async () => {
    const controller = new AbortController();
    const client = createClient({ url: server.url, dataDir, env: {}, configFile: join(home, 'none.json') });
    try {
      const error = await client
        .verify(
          { instrument: 'mag' },
          {
            threads: 1,
            signal: controller.signal,
            onFile: (entry) => {
              if (entry.status === 'ok') controller.abort();
            },
          },
        )
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AbortedError);
      expect((error as AbortedError).exitCode).toBe(130);
      const settled = (error as AbortedError).results as VerifyEntry[];
      expect(settled.length).toBeGreaterThanOrEqual(1);
      expect(settled.length).toBeLessThan(NAMES.length);
    } finally {
      await client.close();
    }
  });
});

describe('verify against an archive that states no MD5 (SSE-KMS)', () => {
  let kms: ReferenceServer;
  let root: string;
  beforeAll(async () => {
    kms = await startReferenceServer({
      store,
      port: 0,
      secret: 'e2e-test-secret-0123456789',
      faults: { kms: true },
    });
    root = join(home, 'copied');
    // Copied in by hand: no record, and the archive's ETag is no MD5.
    for (const name of NAMES.slice(0, 2)) await putFile(root, pathOf(name), contentOf(name));
    const damaged = Buffer.from(contentOf(NAMES[1] as string));
    damaged[0] = (damaged[0] as number) ^ 1;
    await putFile(root, pathOf(NAMES[1] as string), damaged);
  });
  afterAll(async () => {
    await kms?.close();
  });

  it('unverifiable: exit 0, or 1 with --strict; --download compares the bytes and finds the damage', async () => {
    const scope = [...SCOPE, '--start-date', '20240101', '--end-date', '20240102'];
    const plain = await cli(['verify', ...scope], root, kms.url);
    expect(plain.stdout).toMatch(
      /^unverifiable imap\/mag\/l1a\/2024\/01\/\S+ \(no record, and the archive states no checksum/m,
    );
    expect(plain.stderr).toMatch(/0 ok, 0 corrupt, 2 unverifiable/);
    expect(plain.code).toBe(0);
    expect((await cli(['verify', ...scope, '--strict'], root, kms.url)).code).toBe(1);

    const bytes = await cli(['verify', ...scope, '--download'], root, kms.url);
    expect(bytes.code).toBe(1);
    expect(bytes.stdout).toContain(`ok ${pathOf(NAMES[0] as string)}`);
    expect(bytes.stdout).toMatch(new RegExp(`corrupt ${pathOf(NAMES[1] as string)} \\(md5 expected`));
  });
});
