/** The PostgreSQL index as a backend: `postgres://` and `postgresql://` URLs; `pg` is loaded when one is opened. */
import type { IndexBackend } from '../backend-types.js';

/** Records in a PostgreSQL database, shared by every server that names it. */
export const postgresIndexBackend: IndexBackend = {
  schemes: ['postgres', 'postgresql'],
  what: 'PostgreSQL URL',
  form: 'postgres://USER:PASS@HOST:PORT/DB',
  accepts: (location) => /^postgres(ql)?:\/\//.test(location),
  async open(location) {
    const { PostgresIndex } = await import('./postgres-index.js');
    return PostgresIndex.open(location ?? '');
  },
};
