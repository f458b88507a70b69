// Shared test helpers: configuration pointing at a throw-away data directory, and graphs built from
// fixtures with the real pipeline.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PIPELINE_BIN } from '../server/src/commands/build-graph.js';
import { type Config, loadConfig, PROJECT_ROOT } from '../server/src/config.js';

export const SHARED_DATA = path.resolve(PROJECT_ROOT, '..', 'shared', 'data');
export const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures');

export function tempDir(prefix = 'quietway-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A configuration whose data directory is a fresh temporary folder. Tests never reach the internet:
 * the weather service (asked when a ride is recorded) is a closed loopback port unless a test
 * starts its own.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    QUIETWAY_DATA_DIR: tempDir(),
    QUIETWAY_LOG_LEVEL: 'silent',
    QUIETWAY_OPEN_METEO_URL: 'http://127.0.0.1:9',
    ...env,
  });
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
