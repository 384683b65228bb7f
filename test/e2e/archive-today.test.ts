/**
 * Today's archive end to end through the built command line: one file of every kind (science with a repointing
 * suffix and with a Carrington-rotation suffix, ancillary, a kernel in each SPICE folder, a quicklook, a
 * dependency file, a release manifest) uploaded, downloaded by bare name to its storage path, `status` and
 * `verify` clean, listed by `query` (SPICE by `query --table spice --type …`); `sync` and `coverage` over four
 * versions of one product across both generations. On the backends pass (`MISSION_DATA_E2E_BACKENDS=1`) the
 * server runs on a bucket and PostgreSQL whose index was created by the previous schema (version 2, holding a
 * file of the specification's generation) and is migrated in place when the server starts.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePathOrName } from '../../src/naming/names.js';
import { MIGRATIONS, migrate } from '../../src/server/metadata/postgres-schema.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  ON_BACKENDS,
  putFile,
  runCli,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const pathOf = (name: string) => parsePathOrName(name).path;

const SCIENCE_REPOINTED = 'imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf';
const SCIENCE_CR = 'imap_glows_l3a_lightcurve_20250110-cr02291_v000.0001.cdf';
const ANCILLARY = 'imap_mag_calibration_20250101_20251231_v002.cdf';
/** A kernel in each folder below imap/spice/ (two of two types in `ck`), with its kernel type. */
const KERNELS: ReadonlyArray<[name: string, folder: string, type: string]> = [
  ['imap_2025_032_2025_034_003.ah.bc', 'ck', 'attitude_history'],
  ['imap_dps_2025_121_2025_202_07.ah.bc', 'ck', 'pointing_attitude'],
  ['imap_pred_od025_20260303_20260414_v01.bsp', 'spk', 'ephemeris_predicted'],
  ['pck00011.tpc', 'pck', 'planetary_constants'],
  ['naif0012.tls', 'lsk', 'leapseconds'],
  ['imap_sclk_0012.tsc', 'sclk', 'spacecraft_clock'],
  ['imap_science_0001.tf', 'fk', 'science_frames'],
  ['imap_sdc_metakernel_2025_v100.tm', 'mk', 'metakernel'],
  ['imap_2025_122_2025_122_01.spin.csv', 'spin', 'spin'],
  ['imap_2025_230_01.repoint.csv', 'repoint', 'repoint'],
  ['imap_2026_267_2026_267_hist_02.sff', 'activities', 'thruster'],
];
const QUICKLOOK = 'imap_mag_l1a_norm_20250105_v001.0001.png';
const DEPENDENCY = 'imap_mag_l1a_norm_20250105_v001.0001.json';
const RELEASE = 'imap_mag_data-release-001_20250101_20250331_v001.txt';
const EVERY_KIND = [
  SCIENCE_REPOINTED,
  SCIENCE_CR,
  ANCILLARY,
  ...KERNELS.map(([name]) => name),
  QUICKLOOK,
  DEPENDENCY,
  RELEASE,
];

/** Four versions of one product: one of the specification's generation and three of today's. */
const PRODUCT_VERSIONS = [
  'imap_swe_l1b_sci_20250107_20250107_v01-00.cdf',
  'imap_swe_l1b_sci_20250107_v001.0001.cdf',
  'imap_swe_l1b_sci_20250107_v001.0002.cdf',
  'imap_swe_l1b_sci_20250107_v002.0000.cdf',
];
const NEWEST = 'imap_swe_l1b_sci_20250107_v002.0000.cdf';

/** On the backends: a file of the specification's generation that only the index of schema version 2 lists. */
const OLD_INDEX_FILE = 'imap_codice_l1a_hskp_20240301_20240301_v01-00.cdf';

const contentOf = (name: string) => bytesFor(name, 3000 + name.length * 17);

let home: string;
let producer: string;
let server: TestServer;

const cli = (args: readonly string[], dataDir: string) =>
  runCli([...args, '--url', server.url, '--data-dir', dataDir], { cwd: home, timeoutMs: 60_000 });
const query = (args: readonly string[]) =>
  runCli(['query', ...args, '--url', server.url], { cwd: home, timeoutMs: 60_000 });

/** Lays down the index as the previous version made it (schema 2), with one stored file, before the server starts. */
async function indexOfSchemaTwo(backends: {
  indexUrl: string;
  putObject(key: string, body: Buffer): Promise<void>;
}): Promise<void> {
  const pool = new pg.Pool({ connectionString: backends.indexUrl, max: 1 });
  try {
    expect(await migrate(pool, MIGRATIONS.slice(0, 2))).toBe(2);
    const body = contentOf(OLD_INDEX_FILE);
    await backends.putObject(pathOf(OLD_INDEX_FILE), body);
    await pool.query(
      `INSERT INTO files (file_path, state, table_name, instrument, data_level, descriptor, start_date, end_date,
         version, version_rank, extension, ingested_ms, ingestion_day, size, md5, sha256)
       VALUES ($1, 'stored', 'science', 'codice', 'l1a', 'hskp', '20240301', '20240301', 'v01-00', 1000000, 'cdf',
         $2, $3, $4, $5, $6)`,
      [
        pathOf(OLD_INDEX_FILE),
        Date.UTC(2024, 2, 2),
        20240302,
        body.length,
        createHash('md5').update(body).digest(),
        createHash('sha256').update(body).digest(),
      ],
    );
  } finally {
    await pool.end();
  }
}

beforeAll(async () => {
  assertBuilt();
  home = await tempDir('mission-today-home-');
  producer = join(home, 'producer');
  server = await startServer({ prepareBackends: indexOfSchemaTwo });
  for (const name of [...EVERY_KIND, ...PRODUCT_VERSIONS]) await putFile(producer, name, contentOf(name));
  const upload = await cli(['upload', ...[...EVERY_KIND, ...PRODUCT_VERSIONS].map(pathOf)], producer);
  expect(upload.stderr).toContain(`${EVERY_KIND.length + PRODUCT_VERSIONS.length} uploaded`);
  expect(upload.code).toBe(0);
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await cleanup(home);
});

describe('one file of every kind of today’s archive', () => {
  it('is stored at the storage path its kind gives it', async () => {
    const stored = await server.objects();
    for (const name of EVERY_KIND) expect(stored).toContain(pathOf(name));
    expect(pathOf(SCIENCE_REPOINTED)).toBe(`imap/hi/l3a/2025/01/${SCIENCE_REPOINTED}`);
    expect(pathOf(ANCILLARY)).toBe(`imap/ancillary/mag/${ANCILLARY}`);
    for (const [name, folder] of KERNELS) expect(pathOf(name)).toBe(`imap/spice/${folder}/${name}`);
    expect(pathOf(QUICKLOOK)).toBe(`imap/quicklook/mag/l1a/2025/01/${QUICKLOOK}`);
    expect(pathOf(DEPENDENCY)).toBe(`imap/dependency/mag/l1a/2025/01/${DEPENDENCY}`);
    expect(pathOf(RELEASE)).toBe(`imap/release/mag/${RELEASE}`);
  });

  it('is downloaded by its bare name to its storage path, with its bytes; status and verify are clean', async () => {
    const dataDir = join(home, 'by-name');
    const run = await cli(['download', ...EVERY_KIND], dataDir);
    expect(run.stderr).toContain(`${EVERY_KIND.length} downloaded`);
    expect(run.stderr).toContain(`All ${EVERY_KIND.length} verified`);
    expect(run.stderr).not.toMatch(/warning/i);
    expect(run.code).toBe(0);
    for (const name of EVERY_KIND) {
      expect(await readFile(join(dataDir, ...pathOf(name).split('/')))).toEqual(contentOf(name));
    }
    const scopes: Array<[scope: string[], name: string]> = [
      [['--instrument', 'hi'], SCIENCE_REPOINTED],
      [['--instrument', 'glows'], SCIENCE_CR],
      [['--table', 'ancillary', '--instrument', 'mag'], ANCILLARY],
      ...KERNELS.map(([name, , type]): [string[], string] => [['--table', 'spice', '--type', type], name]),
    ];
    for (const [scope, name] of scopes) {
      const status = await cli(['status', ...scope], dataDir);
      expect(status.code, `status ${scope.join(' ')}: ${status.stdout}${status.stderr}`).toBe(0);
      const verify = await cli(['verify', ...scope], dataDir);
      expect(verify.stdout.trim().split('\n'), `verify ${scope.join(' ')}`).toEqual([`ok ${pathOf(name)}`]);
      expect(verify.code).toBe(0);
    }
  });

  it('a glob over a SPICE folder fetches the kernels of every type it holds; a quicklook glob is refused', async () => {
    const dataDir = join(home, 'by-glob');
    const run = await cli(['download', 'imap/spice/ck/*'], dataDir);
    expect(run.code).toBe(0);
    const ck = KERNELS.filter(([, folder]) => folder === 'ck').map(([name]) => name);
    expect(ck).toHaveLength(2);
    for (const name of ck) {
      expect(await readFile(join(dataDir, ...pathOf(name).split('/')))).toEqual(contentOf(name));
    }
    const refused = await cli(['download', 'imap/quicklook/mag/*'], dataDir);
    expect(refused.stderr).toMatch(/lists no quicklooks/);
    expect(refused.code).toBe(2);
  });

  it('science and ancillary are listed by query, with today’s fields', async () => {
    const science = await query([
      '--instrument',
      'hi',
      '--data-level',
      'l3a',
      '--repointing',
      '42',
      '--output-format',
      'json',
    ]);
    expect(science.code).toBe(0);
    const [record, ...others] = JSON.parse(science.stdout) as Array<Record<string, unknown>>;
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      file_path: pathOf(SCIENCE_REPOINTED),
      instrument: 'hi',
      data_level: 'l3a',
      descriptor: 'ena-45',
      start_date: '20250105',
      repointing: 42,
      cr: null,
      version: 'v001.0002',
      major_version: 1,
      minor_version: 2,
    });
    expect(record).not.toHaveProperty('end_date');
    const ancillary = await query(['--table', 'ancillary', '--instrument', 'mag']);
    expect(ancillary.code).toBe(0);
    expect(ancillary.stdout).toContain(ANCILLARY);
    const table = await query(['--instrument', 'glows']);
    expect(table.stdout).toMatch(/CR/);
    expect(table.stdout).toContain('2291');
  });

  it('each kernel is listed by query --table spice --type', async () => {
    for (const [name, , type] of KERNELS) {
      const run = await query(['--table', 'spice', '--type', type, '--output-format', 'json']);
      expect(run.code).toBe(0);
      const records = JSON.parse(run.stdout) as Array<{ file_name: string; kernel_type: string }>;
      expect(records.map((kernel) => kernel.file_name)).toContain(name);
      expect(records.every((kernel) => kernel.kernel_type === type)).toBe(true);
    }
  });
});

describe('versions of one product across both generations', () => {
  it('sync fetches the newest alone, and every version with --all-versions', async () => {
    const newest = join(home, 'sync-newest');
    const run = await cli(['sync', '--instrument', 'swe'], newest);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([join(newest, ...pathOf(NEWEST).split('/'))]);
    const all = join(home, 'sync-all');
    const everything = await cli(['sync', '--instrument', 'swe', '--all-versions'], all);
    expect(everything.code).toBe(0);
    expect(everything.stdout.trim().split('\n').sort()).toEqual(
      PRODUCT_VERSIONS.map((name) => join(all, ...pathOf(name).split('/'))).sort(),
    );
  });

  it('coverage shows the newest version', async () => {
    const run = await cli(
      [
        'coverage',
        '--instrument',
        'swe',
        '--start-date',
        '20250107',
        '--end-date',
        '20250107',
        '--output-format',
        'json',
      ],
      join(home, 'sync-newest'),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('v002.0000');
    expect(run.stdout).not.toContain('v001.0002');
  });
});

describe.runIf(ON_BACKENDS)('an index of the previous schema', () => {
  it('is migrated in place: its file is still listed and downloaded beside today’s', async () => {
    const listed = await query(['--instrument', 'codice', '--output-format', 'json']);
    expect(listed.code).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as Array<{ file_path: string }>).map((record) => record.file_path),
    ).toEqual([pathOf(OLD_INDEX_FILE)]);
    const dataDir = join(home, 'old-index');
    const run = await cli(['download', OLD_INDEX_FILE], dataDir);
    expect(run.code).toBe(0);
    expect(await readFile(join(dataDir, ...pathOf(OLD_INDEX_FILE).split('/')))).toEqual(
      contentOf(OLD_INDEX_FILE),
    );
  });
});
