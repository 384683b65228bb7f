/**
 * Empties dist/ before a build: tsc never deletes what it emitted for a source file since moved or removed,
 * and `npm pack` would ship those leftovers.
 */
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });
