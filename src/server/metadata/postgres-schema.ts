/**
 * The PostgreSQL schema of the index, created and migrated by `serve` itself. Each migration runs with the
 * version bump in one transaction (PostgreSQL's DDL is transactional), so a failing one leaves the schema as it
 * was; an advisory lock keeps two servers starting together from migrating at once.
 */
import type pg from 'pg';

/** The schema is newer than this program's, or a migration of it failed: the schema was left as it was. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

/** One step of the schema: `sql` brings it from version `version - 1` to `version`. */
export interface Migration {
  version: number;
  sql: string;
}

/** Key of the advisory lock held while migrating (any fixed number, the same for every server). */
const MIGRATION_LOCK = 4_018_018;

/**
 * The index's migrations. One `files` table: a row per name, first `reserved` (an upload URL was signed for it),
 * then `stored` (the object was confirmed); only stored rows are records. The naming fields are columns, and
 * partial indexes over stored rows serve each `/query` filter; the `C` collation orders paths by code point,
 * as the in-memory index does.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE files (
  file_path text COLLATE "C" PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('reserved', 'stored')),
  token text,
  url_expires_at bigint,
  release_at bigint,
  content_md5 bytea,
  table_name text NOT NULL CHECK (table_name IN ('science', 'ancillary')),
  instrument text NOT NULL,
  data_level text,
  descriptor text NOT NULL,
  start_date text COLLATE "C" NOT NULL,
  end_date text,
  version text NOT NULL,
  version_rank integer NOT NULL,
  extension text NOT NULL,
  ingested_ms bigint,
  ingestion_day integer,
  size bigint,
  md5 bytea,
  sha256 bytea
);
CREATE INDEX files_by_table ON files (table_name, file_path) WHERE state = 'stored';
CREATE INDEX files_by_instrument ON files (table_name, instrument, file_path) WHERE state = 'stored';
CREATE INDEX files_by_series ON files (instrument, data_level, descriptor, start_date, version_rank)
  WHERE state = 'stored';
CREATE INDEX files_by_descriptor ON files (table_name, descriptor) WHERE state = 'stored';
CREATE INDEX files_by_start ON files (table_name, start_date) WHERE state = 'stored';
CREATE INDEX files_by_version ON files (table_name, version_rank) WHERE state = 'stored';
CREATE INDEX files_by_extension ON files (table_name, extension) WHERE state = 'stored';
CREATE INDEX files_by_ingestion ON files (table_name, ingestion_day) WHERE state = 'stored';
CREATE INDEX files_reserved ON files (url_expires_at) WHERE state = 'reserved';
`,
  },
  {
    // When a reservation was made (told in the answer to another upload of its name), and the claim of the server
    // confirming it: an id and the end of its lease, so a killed server's claim lapses.
    version: 2,
    sql: `
ALTER TABLE files ADD COLUMN reserved_at bigint, ADD COLUMN claim text, ADD COLUMN claim_until bigint;
`,
  },
  {
    // Today's archive: every kind of file has its table (queried or not); a kernel has no instrument,
    // descriptor or start date of its own, but a kernel type and a coverage (min_date, max_date, null where its
    // name carries no date); today's science carries its major and minor version, repointing or Carrington
    // rotation. `series` is what `latest` keeps one row of; the rows found get the series of their columns (the
    // specification's kinds have no suffix). `record` holds a new row's naming fields as the service lists
    // them; the rows found have none, and their paths give them. `version_rank` keeps its meaning: one integer
    // that orders every version form, whose band for the specification's `vXX-YY` is the rank schema 1 stored
    // (XX * 1,000,000 + YY), so the rows found keep their ranks as they are.
    version: 3,
    sql: `
ALTER TABLE files DROP CONSTRAINT files_table_name_check;
ALTER TABLE files ADD CONSTRAINT files_table_name_check
  CHECK (table_name IN ('science', 'ancillary', 'spice', 'quicklook', 'dependency', 'release'));
ALTER TABLE files ALTER COLUMN instrument DROP NOT NULL, ALTER COLUMN descriptor DROP NOT NULL,
  ALTER COLUMN start_date DROP NOT NULL,
  ADD COLUMN major_version integer, ADD COLUMN minor_version integer, ADD COLUMN repointing integer,
  ADD COLUMN cr integer, ADD COLUMN kernel_type text, ADD COLUMN min_date text COLLATE "C",
  ADD COLUMN max_date text COLLATE "C", ADD COLUMN series text COLLATE "C", ADD COLUMN record text;
UPDATE files SET series = instrument || '/' || coalesce(data_level, '') || '/' || descriptor || '/' || start_date || '/';
ALTER TABLE files ALTER COLUMN series SET NOT NULL;
DROP INDEX files_by_series;
CREATE INDEX files_by_series ON files (table_name, series, version_rank) WHERE state = 'stored';
CREATE INDEX files_by_kernel ON files (table_name, kernel_type, file_path) WHERE state = 'stored';
CREATE INDEX files_by_repointing ON files (table_name, repointing) WHERE state = 'stored' AND repointing IS NOT NULL;
`,
  },
];

/** The schema version of the database; 0 for one without the index's tables. */
export async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ version: number }>(
    `SELECT coalesce(max(version), 0)::int AS version FROM mission_data_schema`,
  );
  return rows[0]?.version ?? 0;
}

/**
 * Brings the schema to the last of `migrations`; each one in its own transaction with its version row.
 * Rejects (leaving the schema at the last version that succeeded) when one fails, and when the database is
 * newer than this program.
 */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS mission_data_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    let version = await schemaVersion(client);
    const latest = migrations.at(-1)?.version ?? 0;
    if (version > latest) {
      throw new SchemaError(
        `The index database has schema version ${version}, newer than this program's ${latest}: upgrade mission-data.`,
      );
    }
    for (const migration of migrations) {
      if (migration.version <= version) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO mission_data_schema (version) VALUES ($1)', [migration.version]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new SchemaError(
          `Migration of the index to schema version ${migration.version} failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      version = migration.version;
    }
    return version;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}
