/** The PostgreSQL index beyond the shared suite: migrations that fail change nothing, failures that name no password. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
