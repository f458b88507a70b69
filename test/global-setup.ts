// Once per `vitest run`: with QUIETWAY_TEST_STORE=postgres, one throw-away PostgreSQL cluster for
// the whole suite (test/postgres.ts), its URL handed to the test processes in the environment.
// QUIETWAY_TEST_PG_URL given from outside uses that server instead (each test still makes
// databases of its own there).
import { startPostgres, type TestPostgres } from './postgres.js';

let pg: TestPostgres | null = null;

export async function setup(): Promise<void> {
  if (process.env.QUIETWAY_TEST_STORE !== 'postgres' || process.env.QUIETWAY_TEST_PG_URL) return;
  pg = await startPostgres();
  process.env.QUIETWAY_TEST_PG_URL = pg.url;
}

export function teardown(): void {
  pg?.stop();
  pg = null;
}
