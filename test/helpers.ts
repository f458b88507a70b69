// Shared test helpers: configuration pointing at a throw-away data directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Config, loadConfig } from '../server/src/config.js';

/** A configuration whose data directory is a fresh temporary folder. */
export function testConfig(env: Record<string, string> = {}): Config {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-test-'));
  return loadConfig({ QUIETWAY_DATA_DIR: dataDir, QUIETWAY_LOG_LEVEL: 'silent', ...env });
}
