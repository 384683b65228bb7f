/** The in-memory index as a backend: the default, built at start from what the store lists. */
import type { IndexBackend } from '../backend-types.js';

/** Records kept in memory, made again from the store at every start. */
export const memoryIndexBackend: IndexBackend = {
  schemes: [],
  what: 'in memory',
  form: 'memory',
  accepts: (location) => location === '',
  async open(_location, store) {
    const { MemoryIndex } = await import('./memory-index.js');
    return new MemoryIndex(await store.list());
  },
};
