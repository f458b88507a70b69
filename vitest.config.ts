import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Server tests start real loopback servers and load native graphs; keep them in one process pool of 2.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
