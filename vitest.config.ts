import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // QUIETWAY_TEST_STORE=postgres: one PostgreSQL cluster for the run (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Server tests start real loopback servers and load native graphs, in forked processes. Two at a
    // time: most of a test's time is spent waiting on child processes and sockets, so two files
    // share the two cores of a CI machine well (vitest's default on two cores is one).
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
