import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end tests spawn processes and servers; two cores are shared between them.
    maxWorkers: 2,
  },
});
