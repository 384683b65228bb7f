/**
 * The PostgreSQL index beyond the shared suite: migrations that fail change nothing, an index of schema version 2
 * is migrated in place, failures that name no password.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePath } from '../../src/naming/names.js';
import { PostgresIndex } from '../../src/server/metadata/postgres-index.js';
import { MIGRATIONS, migrate, schemaVersion } from '../../src/server/metadata/postgres-schema.js';
import { startPostgres } from '../helpers/backends.js';

describe('PostgreSQL index', () => {
  let db: Awaited<ReturnType<typeof startPostgres>>;
  beforeAll(async () => {
    db = await startPostgres();
  });
  afterAll(async () => {
    await db?.stop();
  });

  it('creates its schema once, and a failing migration leaves the schema as it was', async () => {
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      expect(await migrate(pool)).toBe(MIGRATIONS.length);
      expect(await migrate(pool)).toBe(MIGRATIONS.length);
      const broken = [
        ...MIGRATIONS,
        {
          version: MIGRATIONS.length + 1,
          sql: 'CREATE TABLE half_done (x int); ALTER TABLE files ADD COLUMN nope no_such_type;',
        },
      ];
      await expect(migrate(pool, broken)).rejects.toThrow(
        new RegExp(`schema version ${MIGRATIONS.length + 1} failed`),
      );
      const client = await pool.connect();
      try {
        expect(await schemaVersion(client)).toBe(MIGRATIONS.length);
        const { rows } = await client.query(`SELECT to_regclass('half_done') AS t`);
        expect(rows[0].t).toBeNull();
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("migrates an index of schema version 2 in place: its rows kept, listed and ranked beside today's", async () => {
    const admin = new pg.Pool({ connectionString: db.url, max: 1 });
    await admin.query('CREATE DATABASE schema_two');
    await admin.end();
    const url = db.url.replace(/\/test$/, '/schema_two');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const old = {
      first: 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_20250107_v01-00.cdf',
      second: 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_20250107_v01-01.cdf',
      ancillary: 'imap/ancillary/mag/imap_mag_calibration_20250101_v01-00.cdf',
      reserved: 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250108_20250108_v01-00.cdf',
    };
    try {
      expect(await migrate(pool, MIGRATIONS.slice(0, 2))).toBe(2);
      // Rows as schema 2's server wrote them: the naming columns of its time, the rank XX * 1,000,000 + YY.
      const row = `INSERT INTO files (file_path, state, table_name, instrument, data_level, descriptor, start_date,
          end_date, version, version_rank, extension, ingested_ms, ingestion_day, size, token, url_expires_at,
          release_at, reserved_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`;
      const stored = [Date.UTC(2025, 0, 8, 6), 20250108, 10, null, null, null, null] as const;
      await pool.query(row, [
        old.first,
        'stored',
        'science',
        'swe',
        'l1b',
        'sci',
        '20250107',
        '20250107',
        'v01-00',
        1_000_000,
        'cdf',
        ...stored,
      ]);
      await pool.query(row, [
        old.second,
        'stored',
        'science',
        'swe',
        'l1b',
        'sci',
        '20250107',
        '20250107',
        'v01-01',
        1_000_001,
        'cdf',
        ...stored,
      ]);
      await pool.query(row, [
        old.ancillary,
        'stored',
        'ancillary',
        'mag',
        null,
        'calibration',
        '20250101',
        null,
        'v01-00',
        1_000_000,
        'cdf',
        ...stored,
      ]);
      const later = Date.now() + 3_600_000;
      await pool.query(row, [
        old.reserved,
        'reserved',
        'science',
        'swe',
        'l1b',
        'sci',
        '20250108',
        '20250108',
        'v01-00',
        1_000_000,
        'cdf',
        null,
        null,
        null,
        'token-2',
        later,
        later + 60_000,
        Date.now(),
      ]);
    } finally {
      await pool.end();
    }

    const index = await PostgresIndex.open(url);
    try {
      const client = await index.pool.connect();
      try {
        expect(await schemaVersion(client)).toBe(3);
      } finally {
        client.release();
      }
      expect(await index.count()).toBe(3);
      expect(await index.get(old.first)).toEqual({
        file_path: old.first,
        instrument: 'swe',
        data_level: 'l1b',
        descriptor: 'sci',
        start_date: '20250107',
        end_date: '20250107',
        version: 'v01-00',
        extension: 'cdf',
        ingestion_date: '2025-01-08 06:00:00',
      });
      expect(await index.get(old.ancillary)).toMatchObject({ end_date: null, version: 'v01-00' });
      const paths = async (filters: Parameters<typeof index.queryChunks>[0]) =>
        (
          JSON.parse(Buffer.concat(await index.queryChunks(filters)).toString()) as { file_path: string }[]
        ).map((record) => record.file_path);
      expect(await paths({ table: 'science', instrument: 'swe', version: 'latest' })).toEqual([old.second]);
      expect(await paths({ table: 'science', version: 'v01-00' })).toEqual([old.first]);
      expect(await paths({ table: 'ancillary' })).toEqual([old.ancillary]);
      expect((await index.reservation(old.reserved))?.token).toBe('token-2');

      // Today's version of the same product is ranked above both, in the same series; every kind has its table.
      const today = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v001.0001.cdf';
      const kernel = 'imap/spice/lsk/naif0012.tls';
      const quicklook = 'imap/quicklook/mag/l1a/2025/01/imap_mag_l1a_norm_20250105_v001.0001.png';
      for (const key of [today, kernel, quicklook]) {
        expect(await index.add({ file: parsePath(key), size: 1, mtimeMs: Date.now() })).toBe(true);
      }
      expect(await paths({ table: 'science', instrument: 'swe', latest: true })).toEqual([today]);
      expect(await paths({ table: 'science', instrument: 'swe' })).toEqual([old.first, old.second, today]);
      expect(await paths({ table: 'spice', type: 'leapseconds' })).toEqual([kernel]);
      expect(await index.get(today)).toMatchObject({ major_version: 1, minor_version: 1, repointing: null });
      expect(await index.count()).toBe(6);
    } finally {
      await index.close();
    }
  });

  it('a wrong password ends with one line naming the database, its password masked', async () => {
    const wrong = db.url.replace('test:test@', 'test:s3cret-pass@');
    const error = await PostgresIndex.open(wrong).catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /^The index database postgres:\/\/test:\*\*\*@127\.0\.0\.1:\d+\/test refused the user or password/,
    );
    expect(
      JSON.stringify({ message: (error as Error).message, hint: (error as { hint?: string }).hint }),
    ).not.toContain('s3cret-pass');
  });

  it('an unreachable database says to check host and port', async () => {
    const error = await PostgresIndex.open('postgres://u:hidden-pw@127.0.0.1:1/x').catch(
      (caught: unknown) => caught as Error,
    );
    expect((error as Error).message).toBe(
      'Cannot reach the index database postgres://u:***@127.0.0.1:1/x (ECONNREFUSED).',
    );
  });
});
