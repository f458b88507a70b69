// An acknowledged report survives `kill -9`: the real server process takes a burst of 200
// submissions and is killed part-way; every report it answered 201 for is in the database after.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../server/src/config.js';
import { openStore } from '../../server/src/db/database.js';
import { storeEnv, tempDir, testStore } from '../helpers.js';
import { compileServer } from '../processes.js';

let server: ChildProcess | undefined;
const dataDir = tempDir();

/** Starts `quietway serve` on a free port; resolves with its base URL. */
function serve(): Promise<string> {
  server = spawn(process.execPath, [path.join(PROJECT_ROOT, 'server', 'dist', 'cli.js'), 'serve'], {
    env: {
      ...process.env,
      QUIETWAY_DATA_DIR: dataDir,
      ...storeEnv(dataDir),
      QUIETWAY_PORT: '0',
      QUIETWAY_LOG_LEVEL: 'info',
      QUIETWAY_RATE_LIMITS: JSON.stringify({ report_submit: { user: [1000, 3600] } }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    server?.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    server?.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

beforeAll(() => {
  // The process runs the compiled server, built from the current sources (test/global-setup.ts).
  compileServer();
}, 180_000);
afterAll(() => {
  server?.kill('SIGKILL');
});

describe('report durability', () => {
  it('loses no acknowledged report when killed with SIGKILL during a burst of 200', async () => {
    const base = await serve();
    const signup = await fetch(`${base}/auth/v1/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'burst@example.org', password: 'long enough pw', name: 'B' }),
    });
    const token = ((await signup.json()) as { access_token: string }).access_token;
    const acknowledged: number[] = [];
    let failed = 0;
    let killed = false;
    const submit = async (i: number) => {
      try {
        const res = await fetch(`${base}/reports/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({
            issue_type: 'other',
            location: [-74 + i * 1e-5, 40.7],
            description: `burst ${i}`,
          }),
        });
        if (res.status === 201) {
          acknowledged.push(((await res.json()) as { id: number }).id);
        } else {
          failed++;
        }
      } catch {
        failed++;
      }
      // Killed part-way, with submissions in flight.
      if (!killed && acknowledged.length >= 100) {
        killed = true;
        server?.kill('SIGKILL');
      }
    };
    const queue = Array.from({ length: 200 }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) await submit(i);
      }),
    );
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);
    expect(acknowledged.length + failed).toBe(200);
    const db = openStore(testStore(dataDir));
    const stored = new Set(db.prepare('SELECT id FROM reports').pluck().all() as number[]);
    db.close();
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  }, 120_000);
});
