// A full disk (issue 26, finding 3): with the data folder and the log on a small tmpfs that the test
// fills, writes answer 503 "Storage full", reads keep working (a failed last-used stamp of an API key
// included), /health/ answers at once and reports it, logging neither blocks nor crashes, and
// everything works again once space is back. Mounting needs root (or CAP_SYS_ADMIN); where it is not
// allowed the test is skipped with a message saying so.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { LogSink } from '../../server/src/logsink.js';
import { tempDir, testConfig } from '../helpers.js';

const MOUNT = tempDir('quietway-fulldisk-');
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', MOUNT], { encoding: 'utf8' });
const canMount = mounted.status === 0;
if (!canMount) {
  console.warn(
    `SKIPPED full-disk test: cannot mount a tmpfs at ${MOUNT} (${(mounted.stderr || mounted.error?.message || 'not permitted').trim()}); run the tests as root to include it`,
  );
}

/** Fills the file system with one file until it refuses more. */
function fill(file: string): void {
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    // Then the last few bytes, so nothing at all is left.
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(512));
    } catch {
      // full
    }
  } finally {
    fs.closeSync(fd);
  }
}

describe.skipIf(!canMount)('a full disk', () => {
  let app: FastifyInstance;
  let sink: LogSink;
  let logFd: number;
  let token: string;
  let key: string;
  let eventId: number;
  const filler = path.join(MOUNT, 'filler.bin');
  const logFile = path.join(MOUNT, 'server.log');
  const auth = () => ({ authorization: `Bearer ${token}` });
  const ride = {
    date_started: '2026-05-01T08:00:00-04:00',
    local_timezone: 'America/New_York',
    distance_traveled: 1200,
    duration_traveled: 300,
  };

  beforeAll(async () => {
    logFd = fs.openSync(logFile, 'a');
    sink = new LogSink(logFd);
    app = await buildApp({
      // The disk that fills is the SQLite file's (and the log's and uploads'), on every pass:
      // PostgreSQL's own disk_full (53100) answers the same 503 (server/src/errors.ts).
      config: testConfig({ QUIETWAY_DATA_DIR: MOUNT, QUIETWAY_LOG_LEVEL: 'info' }, 'sqlite'),
      logger: { level: 'info', stream: sink },
      logSink: sink,
    });
    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'full@example.org', password: 'correct horse battery', name: 'Full' },
    });
    token = signup.json().access_token;
    key = issueKey(app.repos, { kind: 'app', name: 'Reader', source: null, legacyV1: false }).key;
    const ev = await app.inject({
      method: 'POST',
      url: '/api/admin/events/',
      headers: auth(),
      payload: { name: 'Full ride', is_leisure_route: true, destination: { latitude: 40.7, longitude: -74 } },
    });
    eventId = ev.json().id;
    expect(
      (await app.inject({ method: 'POST', url: '/user/routes/', headers: auth(), payload: ride })).statusCode,
    ).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    if (logFd) fs.closeSync(logFd);
    spawnSync('umount', [MOUNT]);
    fs.rmSync(MOUNT, { recursive: true, force: true });
  });

  it('refuses writes with 503, keeps reads and /health/ answering, and never blocks or crashes on logging', async () => {
    fill(filler);
    // Enough writes to fill whatever SQLite still had room for in its WAL.
    let write = await app.inject({ method: 'POST', url: '/user/routes/', headers: auth(), payload: ride });
    for (let i = 0; i < 200 && write.statusCode === 201; i++) {
      write = await app.inject({
        method: 'POST',
        url: '/user/routes/',
        headers: auth(),
        payload: { ...ride, polyline: 'a'.repeat(100_000) },
      });
    }
    expect(write.statusCode).toBe(503);
    expect(write.headers['retry-after']).toBe('60');
    expect(write.json()).toEqual({
      error: 'Storage full',
      details: 'The server cannot save data right now; reading still works.',
    });

    // Reads: the rider's rides, and a public event read with an API key never used before (whose
    // last-used stamp cannot be written).
    const rides = await app.inject({ method: 'GET', url: '/user/routes/', headers: auth() });
    expect(rides.statusCode).toBe(200);
    const event = await app.inject({ method: 'GET', url: `/events/${eventId}/`, headers: { apikey: key } });
    expect(event.statusCode).toBe(200);

    const started = performance.now();
    const health = await app.inject({ method: 'GET', url: '/health/' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'degraded', storage: { status: 'full' } });

    // The log could not be written (past the slack of its last page): lines were dropped, not
    // retried in a loop, and every request was still answered promptly.
    const burst = performance.now();
    for (let i = 0; i < 50; i++) {
      expect((await app.inject({ method: 'GET', url: '/health/' })).statusCode).toBe(200);
    }
    expect(performance.now() - burst).toBeLessThan(5000);
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.dropped).toBeGreaterThan(0);
    expect(sink.lastError).toBe('ENOSPC');
    const reported = await app.inject({ method: 'GET', url: '/health/' });
    expect(reported.json().log.dropped_lines).toBeGreaterThan(0);
  });

  it('works again once space is back: writes succeed and log lines are written', async () => {
    fs.rmSync(filler);
    const sizeBefore = fs.statSync(logFile).size;
    const write = await app.inject({ method: 'POST', url: '/user/routes/', headers: auth(), payload: ride });
    expect(write.statusCode).toBe(201);
    const health = await app.inject({ method: 'GET', url: '/health/' });
    expect(health.json().storage.free_bytes).toBeGreaterThan(1024 * 1024);
    await new Promise((r) => setTimeout(r, 200));
    expect(fs.statSync(logFile).size).toBeGreaterThan(sizeBefore);
    expect(sink.lastError).toBeNull();
  });
});
