// A real PostgreSQL for tests: the throw-away cluster of scripts/pg-cluster.mjs (Debian's
// `postgresql`, installed with apt-get when missing, on a free loopback port), shared with the
// scale benchmark.
//
// `QUIETWAY_TEST_STORE=postgres` runs the whole suite on one (vitest's global set-up starts it;
// test/helpers.ts gives every test data directory a database of its own there).
export { startPostgres, type TestPostgres } from '../scripts/pg-cluster.mjs';
