/**
 * The index in PostgreSQL: records shared by every server on one database. A name is reserved by one
 * statement whose row lock decides between concurrent uploads, and a record becomes visible only when its
 * object was confirmed; both survive a server's crash, since the database holds all of it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parsePath } from '../../naming/names.js';
import type { StoredObject } from '../objects/object-store.js';
import {
  addedNow,
  CLAIM_LEASE_MS,
  couldMatch,
  type IndexQuery,
  type MetadataIndex,
  type MetadataRecord,
  type QueryPage,
  type QueryWithPending,
  type Reservation,
  type ReserveOptions,
} from './metadata-index.js';
import { indexFailure, maskDatabaseUrl } from './postgres-failures.js';
import {
  NAMING_COLUMN_COUNT,
  queryStatement,
  queryWithPendingStatement,
  type RecordRow,
  ROW_COLUMNS,
  ROW_TYPES,
  recordJson,
  rowValues,
} from './postgres-query.js';
import { migrate } from './postgres-schema.js';

/** Rows inserted per statement by `addAll` and `rebuild`. */
const BATCH_ROWS = 5_000;

const EMPTY_ARRAY = Buffer.from('[]');

/** The columns a name alone fills (the first of `ROW_COLUMNS`); the rest come with the object. */
const NAMING_COLUMNS = ROW_COLUMNS.split(', ').slice(0, NAMING_COLUMN_COUNT);

interface ReservationRow {
  file_path: string;
  token: string;
  url_expires_at: string;
  release_at: string;
  content_md5: Buffer | null;
  reserved_at: string | null;
}

/** A reservation's row in the answer of `queryWithPendingStatement`. */
type PendingRow = ReservationRow & { pending: true };

/** The records of `rows`, in their order, as the chunks of one JSON array. */
function recordChunks(rows: readonly RecordRow[]): Buffer[] {
  if (rows.length === 0) return [EMPTY_ARRAY];
  return [Buffer.from(`[${rows.map(recordJson).join(',')}]`, 'utf8')];
}

const RESERVATION_COLUMNS = 'file_path, token, url_expires_at, release_at, content_md5, reserved_at';

function reservationOf(row: ReservationRow): Reservation {
  return {
    key: row.file_path,
    token: row.token,
    urlExpiresAtMs: Number(row.url_expires_at),
    releaseAtMs: Number(row.release_at),
    ...(row.content_md5 ? { md5: row.content_md5 } : {}),
    // A row of schema version 1 has no time of reservation: its URL was then an hour long.
    reservedAtMs: row.reserved_at === null ? Number(row.url_expires_at) - 3_600_000 : Number(row.reserved_at),
  };
}

/** Records in a PostgreSQL database (`postgres://USER:PASS@HOST:PORT/DB`). */
export class PostgresIndex implements MetadataIndex {
  readonly location: string;

  private constructor(
    readonly pool: pg.Pool,
    url: string,
  ) {
    this.location = maskDatabaseUrl(url);
  }

  /** Connects, creates or migrates the schema, and resolves once the database answered. */
  static async open(url: string): Promise<PostgresIndex> {
    // A database that stops answering fails the query (then answered 503) rather than holding it for ever.
    const pool = new pg.Pool({
      connectionString: url,
      max: 8,
      connectionTimeoutMillis: 10_000,
      query_timeout: 10_000,
    });
    // An idle client losing its connection must not end the process; the next query reports it.
    pool.on('error', () => undefined);
    const index = new PostgresIndex(pool, url);
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw indexFailure(error, index.location);
    }
    return index;
  }

  async check(): Promise<void> {
    try {
      await this.pool.query('SELECT 1 FROM files LIMIT 1');
    } catch (error) {
      throw indexFailure(error, this.location);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM files WHERE state = 'stored'`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async has(key: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `SELECT 1 FROM files WHERE file_path = $1 AND state = 'stored'`,
      [key],
    );
    return (rowCount ?? 0) > 0;
  }

  async get(key: string): Promise<MetadataRecord | undefined> {
    const { rows } = await this.pool.query<RecordRow>(
      `SELECT file_path, record, ingested_ms FROM files WHERE file_path = $1 AND state = 'stored'`,
      [key],
    );
    return rows[0] && (JSON.parse(recordJson(rows[0])) as MetadataRecord);
  }

  async add(object: StoredObject): Promise<boolean> {
    const values = rowValues(addedNow(object));
    const places = values.map((_, at) => `$${at + 1}`).join(', ');
    const { rowCount } = await this.pool.query(
      `INSERT INTO files (state, ${ROW_COLUMNS}) VALUES ('stored', ${places}) ON CONFLICT (file_path) DO NOTHING`,
      values,
    );
    return rowCount === 1;
  }

  async addAll(objects: readonly StoredObject[]): Promise<number> {
    const now = Date.now();
    return this.#insert(
      objects.map((object) => addedNow(object, now)),
      this.pool,
    );
  }

  /** Inserts the rows of `objects` as they are (their own times), those of paths not listed yet. */
  async #insert(objects: readonly StoredObject[], client: pg.Pool | pg.PoolClient): Promise<number> {
    let added = 0;
    for (let at = 0; at < objects.length; at += BATCH_ROWS) {
      const rows = objects.slice(at, at + BATCH_ROWS).map(rowValues);
      const columns = ROW_TYPES.map((_, column) => rows.map((row) => row[column]));
      const arrays = ROW_TYPES.map((type, column) => `$${column + 1}::${type}[]`).join(', ');
      const { rowCount } = await client.query(
        `INSERT INTO files (state, ${ROW_COLUMNS}) SELECT 'stored', * FROM unnest(${arrays}) ON CONFLICT (file_path) DO NOTHING`,
        columns,
      );
      added += rowCount ?? 0;
    }
    return added;
  }

  async rebuild(objects: readonly StoredObject[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`DELETE FROM files WHERE state = 'stored'`);
      await this.#insert(objects, client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * One statement: inserts the reservation, takes over one past its release time, or renews one made with the
   * same Content-MD5 (same token and start, new times); a stored row or a held reservation of other bytes makes
   * it return nothing. The row lock of the conflict serializes concurrent reservers.
   */
  async reserve(key: string, options: ReserveOptions): Promise<Reservation | undefined> {
    // The naming columns are filled at once, so the row is whole; they are the same when it is stored.
    const naming = rowValues({ file: parsePath(key), size: 0, mtimeMs: 0 }).slice(0, NAMING_COLUMNS.length);
    const token = randomBytes(12).toString('hex');
    const now = Date.now();
    const fixed = [
      token,
      options.urlExpiresAtMs,
      options.releaseAtMs,
      options.md5 ?? null,
      now,
      options.reservedAtMs ?? now,
    ];
    const places = naming.map((_, at) => `$${at + fixed.length + 1}`).join(', ');
    const same =
      'files.release_at > $5 AND files.content_md5 IS NOT NULL AND files.content_md5 = EXCLUDED.content_md5';
    const { rows } = await this.pool.query<ReservationRow>(
      `INSERT INTO files (state, token, url_expires_at, release_at, content_md5, reserved_at, ${NAMING_COLUMNS.join(', ')})
       VALUES ('reserved', $1, $2, $3, $4, $6, ${places})
       ON CONFLICT (file_path) DO UPDATE SET url_expires_at = EXCLUDED.url_expires_at,
         release_at = EXCLUDED.release_at, content_md5 = EXCLUDED.content_md5,
         token = CASE WHEN ${same} THEN files.token ELSE EXCLUDED.token END,
         reserved_at = CASE WHEN ${same} THEN files.reserved_at ELSE EXCLUDED.reserved_at END,
         claim = CASE WHEN ${same} THEN files.claim ELSE NULL END,
         claim_until = CASE WHEN ${same} THEN files.claim_until ELSE NULL END
       WHERE files.state = 'reserved' AND (files.release_at <= $5 OR (${same}))
       RETURNING ${RESERVATION_COLUMNS}`,
      [...fixed, ...naming],
    );
    return rows[0] && reservationOf(rows[0]);
  }

  async pending(): Promise<Reservation[]> {
    const { rows } = await this.pool.query<ReservationRow>(
      `SELECT ${RESERVATION_COLUMNS} FROM files WHERE state = 'reserved' ORDER BY url_expires_at`,
    );
    return rows.map(reservationOf);
  }

  async reservation(key: string): Promise<Reservation | undefined> {
    const { rows } = await this.pool.query<ReservationRow>(
      `SELECT ${RESERVATION_COLUMNS} FROM files WHERE file_path = $1 AND state = 'reserved'`,
      [key],
    );
    return rows[0] && reservationOf(rows[0]);
  }

  async state(key: string): Promise<'stored' | Reservation | undefined> {
    const { rows } = await this.pool.query<ReservationRow & { state: 'stored' | 'reserved' }>(
      `SELECT state, ${RESERVATION_COLUMNS} FROM files WHERE file_path = $1`,
      [key],
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.state === 'stored' ? 'stored' : reservationOf(row);
  }

  /** One statement: the row's claim is taken when it has none or its lease ended; the row lock decides. */
  async claim(reservation: Reservation, leaseMs = CLAIM_LEASE_MS): Promise<string | undefined> {
    const claim = randomBytes(9).toString('hex');
    const now = Date.now();
    const { rowCount } = await this.pool.query(
      `UPDATE files SET claim = $3, claim_until = $4
       WHERE file_path = $1 AND state = 'reserved' AND token = $2 AND (claim_until IS NULL OR claim_until <= $5)`,
      [reservation.key, reservation.token, claim, now + leaseMs, now],
    );
    return rowCount === 1 ? claim : undefined;
  }

  async unclaim(reservation: Reservation, claim: string): Promise<void> {
    await this.pool.query(
      `UPDATE files SET claim = NULL, claim_until = NULL WHERE file_path = $1 AND state = 'reserved' AND claim = $2`,
      [reservation.key, claim],
    );
  }

  async confirm(reservation: Reservation, object: StoredObject): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE files SET state = 'stored', token = NULL, url_expires_at = NULL, release_at = NULL, content_md5 = NULL,
         reserved_at = NULL, claim = NULL, claim_until = NULL,
         ingested_ms = $3, ingestion_day = $4, size = $5, md5 = $6, sha256 = $7
       WHERE file_path = $1 AND state = 'reserved' AND token = $2`,
      [reservation.key, reservation.token, ...rowValues(addedNow(object)).slice(NAMING_COLUMNS.length)],
    );
    return rowCount === 1;
  }

  async release(reservation: Reservation): Promise<void> {
    await this.pool.query(`DELETE FROM files WHERE file_path = $1 AND state = 'reserved' AND token = $2`, [
      reservation.key,
      reservation.token,
    ]);
  }

  async queryChunks(filters: IndexQuery, page?: QueryPage): Promise<Buffer[]> {
    const { text, values } = queryStatement(filters, page);
    const { rows } = await this.pool.query<RecordRow>(text, values);
    return recordChunks(rows);
  }

  async queryWithPending(filters: IndexQuery, page?: QueryPage): Promise<QueryWithPending> {
    const { text, values } = queryWithPendingStatement(filters, page);
    const { rows } = await this.pool.query<(RecordRow & { pending: false }) | PendingRow>(text, values);
    const records: RecordRow[] = [];
    const pending: Reservation[] = [];
    for (const row of rows) {
      if (!row.pending) records.push(row);
      else if (couldMatch(row.file_path, filters)) pending.push(reservationOf(row));
    }
    return { chunks: recordChunks(records), pending };
  }
}
