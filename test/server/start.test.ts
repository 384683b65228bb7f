/** `startReferenceServer` options and store checks, and the demo archive. */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FILE_KINDS } from '../../src/naming/file-types.js';
import { tableOf } from '../../src/naming/grammars.js';
import { type MissionFile, parseName } from '../../src/naming/names.js';
import { SPICE_FOLDERS } from '../../src/naming/spice.js';
import { storeBackendOf, storeScheme } from '../../src/server/backend-registry.js';
import { demoFileNames } from '../../src/server/demo-archive.js';
import { isStoreEmpty, startReferenceServer, writeDemoArchive } from '../../src/server/index.js';
import { unixOnly } from '../helpers/platform.js';
import { makeTempDir, outcomeOf, putStoreFile, rawRequest, TEST_SECRET } from './helpers.js';

const LINKS = unixOnly('symlinks');

let root: string;
beforeEach(async () => {
  root = await makeTempDir();
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('--store locations', () => {
  it('a scheme names a backend; a single letter (a drive) or none is a folder', () => {
    expect(storeScheme('s3://bucket/x')).toBe('s3');
    expect(storeScheme('GS://bucket')).toBe('gs');
    expect(storeScheme('C:\\archive')).toBeUndefined();
    expect(storeScheme('c:/archive')).toBeUndefined();
    expect(storeScheme('./a:b')).toBeUndefined();
    expect(storeScheme('/srv/archive')).toBeUndefined();
    expect(storeBackendOf('s3://bucket/imap')?.scheme).toBe('s3');
    expect(storeBackendOf('archive')).toBeUndefined();
    expect(() => storeBackendOf('gs://bucket')).toThrow(
      /names no known kind of store \(gs:\); give one of: a folder, s3:/,
    );
    expect(() => storeBackendOf('s3:bucket')).toThrow(/is not of the form s3:\/\/BUCKET\[\/PREFIX\]/);
  });

  it('startReferenceServer refuses an unknown scheme as a usage error, creating no folder', async () => {
    await expect(startReferenceServer({ store: 'gs://bucket' })).rejects.toMatchObject({
      code: 'E_USAGE',
    });
    expect(existsSync('gs:')).toBe(false);
  });
});

describe('startReferenceServer', () => {
  it('defaults: loopback, a free port, the envelope on the wire, and the store created', async () => {
    const storeDir = join(root, 'new', 'store');
    const server = await startReferenceServer({ store: storeDir });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      expect(server.port).toBeGreaterThan(0);
      expect(server.store).toBe(storeDir);
      expect(server.objectCount).toBe(0);
      const result = await rawRequest(server.url, '/query?instrument=mag');
      expect(result.status).toBe(200);
      expect(JSON.parse(result.text)).toEqual({
        statusCode: 200,
        headers: { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' },
        body: [],
      });
    } finally {
      await server.close();
    }
    // close() can be called again and the port is free.
    await server.close();
    await expect(rawRequest(server.url, '/query?instrument=mag')).rejects.toThrow();
  });

  it('hands out URLs on the address the client used', async () => {
    const server = await startReferenceServer({ store: join(root, 'store'), secret: TEST_SECRET });
    try {
      const name = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
      const viaName = await rawRequest(server.url, `/upload/${name}`, {
        headers: { Host: `localhost:${server.port}` },
      });
      expect(outcomeOf(viaName, 'envelope').body).toMatch(
        new RegExp(`^http://localhost:${server.port}/objects/imap/mag/l1a/2025/01/${name}\\?`),
      );
      // A Host header that is no host falls back to the listening address.
      const forged = await rawRequest(server.url, `/upload/${name}`, {
        headers: { Host: 'evil.example/path?x=' },
      });
      expect(outcomeOf(forged, 'envelope').body).toMatch(new RegExp(`^${server.url}/objects/`));
    } finally {
      await server.close();
    }
  });

  it.each([
    [{ wire: 'lambda' }, 'Unknown wire mode "lambda"; choose one of envelope, envelope-200, gateway.'],
    [{ port: 70000 }, 'Invalid port 70000: give a whole number from 0 to 65535.'],
    [{ port: 1.5 }, 'Invalid port 1.5: give a whole number from 0 to 65535.'],
    [{ secret: 'short' }, 'The signing secret must have at least 16 characters.'],
    [{ uploadConcurrency: 0 }, 'Invalid upload concurrency 0: give a whole number of at least 1.'],
    [{ uploadConcurrency: 2.5 }, 'Invalid upload concurrency 2.5: give a whole number of at least 1.'],
  ])('rejects %j as a usage error', async (options, message) => {
    await expect(
      startReferenceServer({ store: join(root, 'store'), ...(options as object) }),
    ).rejects.toMatchObject({ code: 'E_USAGE', message });
  });

  it('still takes the store as `storeDir`, its deprecated name', async () => {
    const folder = join(root, 'named-the-old-way');
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    let warnings: unknown[][] = [];
    const server = await startReferenceServer({ storeDir: folder }).finally(() => {
      warnings = [...warn.mock.calls];
      warn.mockRestore();
    });
    // Said as Node says a deprecation, once.
    expect(warnings).toEqual([
      [
        expect.stringContaining('`storeDir` is deprecated'),
        { type: 'DeprecationWarning', code: 'MISSION_DATA_STORE_DIR' },
      ],
    ]);
    try {
      expect(server.store).toBe(folder);
      // The result keeps the former name too, for one release.
      expect(server.storeDir).toBe(folder);
      expect(existsSync(folder)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('refuses `store` and `storeDir` together, and neither, as usage errors, creating no folder', async () => {
    const folder = join(root, 'store');
    // @ts-expect-error: the options' type refuses both as well.
    await expect(startReferenceServer({ store: folder, storeDir: folder })).rejects.toMatchObject({
      code: 'E_USAGE',
      message:
        'Give startReferenceServer `store` or `storeDir` (its deprecated name), not both: `store` alone will do.',
    });
    // @ts-expect-error: and neither.
    await expect(startReferenceServer({ port: 0 })).rejects.toMatchObject({
      code: 'E_USAGE',
      message:
        'Give startReferenceServer a `store`: a folder path, or a store URL such as s3://BUCKET[/PREFIX].',
    });
    expect(existsSync(folder)).toBe(false);
  });

  it('a store that is a file is an E_STORE error that says so', async () => {
    const file = join(root, 'file');
    await writeFile(file, 'x');
    await expect(startReferenceServer({ store: file })).rejects.toMatchObject({
      code: 'E_STORE',
      message: `The store ${file} is a file, not a folder.`,
    });
  });

  it.skipIf(LINKS.missing)(
    LINKS.title('refuses a symlinked .incoming folder, so no upload is written outside the store'),
    async () => {
      const storeDir = join(root, 'store');
      const outside = join(root, 'outside');
      await mkdir(storeDir);
      await mkdir(outside);
      await symlink(outside, join(storeDir, '.incoming'));
      await expect(startReferenceServer({ store: storeDir })).rejects.toMatchObject({
        code: 'E_STORE',
        message: `${join(storeDir, '.incoming')} must be a folder of the store, not a symlink or a file; remove it.`,
      });
      expect(await readdir(outside)).toEqual([]);
    },
  );

  it.skipIf(LINKS.missing)(LINKS.title('refuses a symlinked secret file'), async () => {
    const storeDir = join(root, 'store');
    await mkdir(storeDir);
    const known = join(root, 'known.txt');
    await writeFile(known, 'a'.repeat(64));
    await symlink(known, join(storeDir, '.mission-data-secret'));
    await expect(startReferenceServer({ store: storeDir })).rejects.toMatchObject({
      code: 'E_STORE',
      message: `${join(storeDir, '.mission-data-secret')} is a symlink; the store's secret must be a plain file.`,
    });
  });

  it('removes temporary files an hour old, and keeps newer ones (another server may be writing them)', async () => {
    const storeDir = join(root, 'store');
    await putStoreFile(storeDir, '.incoming/old.part', 'x', new Date(Date.now() - 2 * 3600_000));
    await putStoreFile(storeDir, '.incoming/new.part', 'x');
    const server = await startReferenceServer({ store: storeDir });
    await server.close();
    expect(await readdir(join(storeDir, '.incoming'))).toEqual(['new.part']);
  });
});

/** Every file below `folder`: its path, its bytes' digest and its mtime. */
async function snapshot(folder: string): Promise<Array<[string, string, number]>> {
  const rows: Array<[string, string, number]> = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else {
        const digest = createHash('sha256')
          .update(await readFile(path))
          .digest('hex');
        rows.push([relative(folder, path), digest, (await stat(path)).mtimeMs]);
      }
    }
  };
  await walk(folder);
  return rows.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe('the demo archive', () => {
  it('is the same, byte for byte and mtime for mtime, every time it is written', async () => {
    const first = join(root, 'first');
    const second = join(root, 'second');
    expect(await writeDemoArchive(first)).toBe(demoFileNames().length);
    expect(await writeDemoArchive(second)).toBe(demoFileNames().length);
    const a = await snapshot(first);
    expect(a).toHaveLength(demoFileNames().length);
    expect(await snapshot(second)).toEqual(a);
    // Written again over itself, it adds and changes nothing.
    expect(await writeDemoArchive(first)).toBe(0);
    expect(await snapshot(first)).toEqual(a);
  });

  it("covers several instruments, levels, descriptors, two months, versions and ancillary files of the specification's generation", () => {
    const files: MissionFile[] = demoFileNames()
      .map((name) => parseName(name))
      .filter((file) => file.generation === 'spec');
    const science = files.filter((file) => file.kind === 'science');
    const ancillary = files.filter((file) => file.kind === 'ancillary');
    expect(new Set(science.map((file) => file.instrument)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(science.map((file) => file.descriptor)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(science.map((file) => file.startDate.slice(0, 6)))).toEqual(new Set(['202501', '202502']));
    const levels = new Set(science.map((file) => `${file.dataLevel}.${file.extension}`));
    expect(levels).toContain('l0.pkts');
    expect([...levels].filter((level) => level.endsWith('.cdf')).length).toBeGreaterThanOrEqual(3);
    const series = new Map<string, Set<string>>();
    for (const file of science) {
      const key = `${file.instrument}/${file.dataLevel}/${file.descriptor}/${file.startDate}`;
      series.set(key, (series.get(key) ?? new Set()).add(file.version));
    }
    const versionCounts = [...series.values()].map((versions) => versions.size);
    expect(versionCounts.filter((count) => count >= 2).length).toBeGreaterThan(5);
    expect(Math.max(...versionCounts)).toBeGreaterThanOrEqual(3);
    expect(ancillary.length).toBeGreaterThanOrEqual(3);
    expect(ancillary.some((file) => file.endDate === undefined)).toBe(true);
    expect(new Set(ancillary.map((file) => file.extension)).size).toBeGreaterThanOrEqual(3);
  });

  it("holds every kind of today's archive: suffixed science, versions of one product, a kernel in every SPICE folder", () => {
    const today = demoFileNames()
      .map((name) => parseName(name))
      .filter((file) => file.generation === 'today');
    expect(new Set(today.map((file) => file.kind))).toEqual(new Set(FILE_KINDS));
    const science = today.filter((file) => file.kind === 'science');
    expect(science.some((file) => file.repointing !== undefined)).toBe(true);
    expect(science.some((file) => file.cr !== undefined)).toBe(true);
    expect(science.some((file) => file.repointing === undefined && file.cr === undefined)).toBe(true);
    const versions = science
      .filter((file) => file.name.startsWith('imap_hi_l3a_ena-45_20250305-repoint00042_'))
      .map((file) => file.version);
    expect(versions).toEqual(['v001.0001', 'v001.0002', 'v002.0000']);
    // One product of both generations: its versions of the specification's and of today's.
    const codice = demoFileNames().filter((name) => name.startsWith('imap_codice_l1a_hi-counters_20250101_'));
    expect(codice.map((name) => parseName(name).generation)).toEqual(
      expect.arrayContaining(['spec', 'today']),
    );
    const folders = today.flatMap((file) => (file.kind === 'spice' ? [file.folder] : []));
    expect(new Set(folders)).toEqual(new Set(SPICE_FOLDERS));
    expect(today.some((file) => file.kind === 'ancillary' && /^v\d{3}$/.test(file.version))).toBe(true);
  });

  it("answers today's queries on it: repointing, latest across versions, SPICE kernels by type", async () => {
    const storeDir = join(root, 'demo-today');
    await writeDemoArchive(storeDir);
    const server = await startReferenceServer({ store: storeDir, wire: 'gateway', dialect: 'today' });
    try {
      const get = async (search: string) =>
        JSON.parse((await rawRequest(server.url, search)).text) as Array<Record<string, unknown>>;
      const latest = await get('/query?instrument=hi&repointing=42&latest=true');
      expect(latest.map((record) => record.version)).toEqual(['v002.0000']);
      const codice = await get(
        '/query?instrument=codice&data_level=l1a&descriptor=hi-counters&start_date=20250101&end_date=20250101&latest=true',
      );
      expect(codice.map((record) => record.version)).toEqual(['v001.0001']);
      const kernels = await get('/spice-query?type=leapseconds&latest=true');
      expect(kernels.map((record) => record.file_name)).toEqual(['naif0012.tls']);
    } finally {
      await server.close();
    }
  });

  it('is served with its mtimes as ingestion dates, after the files start', async () => {
    const storeDir = join(root, 'demo');
    expect(await isStoreEmpty(storeDir)).toBe(true);
    await writeDemoArchive(storeDir);
    expect(await isStoreEmpty(storeDir)).toBe(false);
    const server = await startReferenceServer({ store: storeDir });
    try {
      expect(server.objectCount).toBe(demoFileNames().length);
      const records = outcomeOf(await rawRequest(server.url, '/query?table=science'), 'envelope')
        .body as Array<{ file_path: string; start_date: string; ingestion_date: string }>;
      expect(records).toHaveLength(
        demoFileNames().filter((name) => tableOf(parseName(name)) === 'science').length,
      );
      for (const record of records) {
        const ingested = record.ingestion_date.slice(0, 10).replaceAll('-', '');
        expect(ingested > record.start_date).toBe(true);
        const mtime = (await lstat(join(storeDir, record.file_path))).mtime;
        expect(record.ingestion_date).toBe(mtime.toISOString().slice(0, 19).replace('T', ' '));
      }
    } finally {
      await server.close();
    }
    expect(existsSync(join(storeDir, '.mission-data-secret'))).toBe(true);
  });
});
