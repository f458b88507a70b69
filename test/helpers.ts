// Shared test helpers: configuration pointing at a throw-away data directory, and graphs built from
// fixtures with the real pipeline.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PIPELINE_BIN } from '../server/src/commands/build-graph.js';
import { type Config, loadConfig, PROJECT_ROOT } from '../server/src/config.js';
import type { StoreLocation } from '../server/src/db/database.js';
import { PgDb } from '../server/src/db/pg.js';

export const SHARED_DATA = path.resolve(PROJECT_ROOT, '..', 'shared', 'data');
export const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures');

export function tempDir(prefix = 'quietway-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A configuration whose data directory is a fresh temporary folder, its store the suite's (the
 * SQLite file there, or a PostgreSQL database of its own; `store` 'sqlite' keeps the file). Tests never reach the internet:
 * the weather service (asked when a ride is recorded) is a closed loopback port unless a test
 * starts its own.
 */
export function testConfig(env: Record<string, string> = {}, store: 'suite' | 'sqlite' = 'suite'): Config {
  const dataDir = env.QUIETWAY_DATA_DIR ?? tempDir();
  return loadConfig({
    QUIETWAY_DATA_DIR: dataDir,
    QUIETWAY_LOG_LEVEL: 'silent',
    QUIETWAY_OPEN_METEO_URL: 'http://127.0.0.1:9',
    ...(store === 'suite' ? storeEnv(dataDir) : {}),
    ...env,
  });
}

/** Where a data directory's store is (to open it beside the server, as the admin CLI does). */
export function testStore(dataDir: string): StoreLocation {
  return {
    databasePath: path.join(dataDir, 'quietway.db'),
    databaseUrl: storeEnv(dataDir).QUIETWAY_DATABASE_URL ?? null,
  };
}

/** Which store the suite runs on: the SQLite file (default) or PostgreSQL (`QUIETWAY_TEST_STORE`). */
export const TEST_STORE: 'sqlite' | 'postgres' =
  process.env.QUIETWAY_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

let pgAdmin: PgDb | null = null;
const pgDatabases = new Map<string, string>();

/** A fresh, empty PostgreSQL database on the suite's cluster; its URL. */
export function freshPostgresDatabase(): string {
  const base = process.env.QUIETWAY_TEST_PG_URL;
  if (!base) throw new Error('QUIETWAY_TEST_PG_URL is not set (run with QUIETWAY_TEST_STORE=postgres)');
  pgAdmin ??= new PgDb(base);
  const name = `qw_${process.pid}_${pgDatabases.size}_${Math.random().toString(36).slice(2, 8)}`;
  pgAdmin.exec(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The environment that puts a data directory's store where the suite runs: nothing for SQLite
 * (the file lives in the directory), else the URL of a PostgreSQL database of its own, the same
 * one for every process and configuration given that directory (so two server processes on one
 * data directory share one store, as they share one SQLite file).
 */
export function storeEnv(dataDir: string | undefined): Record<string, string> {
  if (TEST_STORE !== 'postgres') return {};
  const key = dataDir ? path.resolve(dataDir) : `fresh-${pgDatabases.size}`;
  let url = pgDatabases.get(key);
  if (!url) {
    url = freshPostgresDatabase();
    pgDatabases.set(key, url);
  }
  return { QUIETWAY_DATABASE_URL: url };
}

/** Builds a city graph with the real pipeline into `outDir`; returns the graph file. */
export function buildGraph(city: string, osm: string[], outDir: string, minIsland = 1): string {
  const res = spawnSync(
    PIPELINE_BIN,
    [
      '--city',
      city,
      '--osm',
      ...osm,
      '--out',
      outDir,
      '--shared-data',
      SHARED_DATA,
      '--min-island-nodes',
      String(minIsland),
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  if (res.status !== 0) throw new Error(`graph build failed: ${res.stderr}`);
  return path.join(outDir, `${city}.qwg`);
}
