// Once per `vitest run`: the compiled server the process tests start (`server/dist`), built from
// the current sources before any test file runs, so that no file rewrites it under another's
// server process (a module half written was read as one without its exports); with
// QUIETWAY_TEST_STORE=postgres, one throw-away PostgreSQL cluster for
// the whole suite (test/postgres.ts), its URL handed to the test processes in the environment.
// QUIETWAY_TEST_PG_URL given from outside uses that server instead (each test still makes
// databases of its own there).
import { startPostgres, type TestPostgres } from './postgres.js';
import { compileServer } from './processes.js';

let pg: TestPostgres | null = null;

export async function setup(): Promise<void> {
  compileServer();
  if (process.env.QUIETWAY_TEST_STORE !== 'postgres' || process.env.QUIETWAY_TEST_PG_URL) return;
  pg = await startPostgres();
  process.env.QUIETWAY_TEST_PG_URL = pg.url;
}

export function teardown(): void {
  pg?.stop();
  pg = null;
}
