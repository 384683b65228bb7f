/** What a failing index database means to the operator, with the password of its URL never shown. */
import { StoreError } from '../../core/errors.js';
import { SchemaError } from './postgres-schema.js';

/** The URL with its password replaced by `***` (also a `password=` query parameter). */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return 'the database URL (unreadable; check its form: postgres://USER:PASS@HOST:PORT/DB)';
  }
}

/**
 * A StoreError naming the database (password masked) and what to check. PostgreSQL's own messages name no
 * password, but they are not repeated for connection failures, whose cause is enough.
 */
export function indexFailure(error: unknown, where: string): StoreError {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === '28P01' || code === '28000') {
    return new StoreError(`The index database ${where} refused the user or password (${code}).`, {
      hint: 'Check the user and password in --index (or MISSION_DATA_INDEX_URL).',
    });
  }
  if (code === '3D000') {
    return new StoreError(`The index database ${where} does not exist (${code}).`, {
      hint: 'Create the database, or check its name in --index (or MISSION_DATA_INDEX_URL).',
    });
  }
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'ETIMEDOUT' ||
    // A last resort: pg and pg-pool end a connect that took too long with an error of no code, only words
    // ("Connection terminated due to connection timeout", "timeout exceeded when trying to connect").
    /timeout/i.test(message)
  ) {
    return new StoreError(
      `Cannot reach the index database ${where} (${typeof code === 'string' ? code : 'timeout'}).`,
      {
        hint: 'Check that PostgreSQL runs there and the host and port in --index (or MISSION_DATA_INDEX_URL).',
      },
    );
  }
  if (error instanceof SchemaError) {
    return new StoreError(`The index database ${where}: ${message}`, {
      hint: 'The schema was left as it was.',
    });
  }
  return new StoreError(
    `The index database ${where} failed (${typeof code === 'string' ? code : 'error'}).`,
    {
      hint: 'Check the index database URL and that the user may create tables in it.',
    },
  );
}
