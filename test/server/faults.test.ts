// Faults the server must ride out (issue 21): graph files that are corrupt, truncated or missing
// (refused at start; that city answers 503 while the others route), upstreams that hang (GBFS, place
// search, weather and WZDx all pointed at a server that never answers) while directions keep their
// latency, and slow clients (slowloris from another address) that cannot keep routing from others.
// Writes under kill -9: reports-durability.test.ts and writes-durability.test.ts.
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { buildGraph, SHARED_DATA, tempDir, testConfig } from '../helpers.js';

const osm = (f: string) => path.join(SHARED_DATA, 'osm', f);
const SOHO: [number, number][] = [
  [-74.0035, 40.7233],
  [-73.9975, 40.7265],
];
const LOOP: [number, number][] = [
  [-87.6298, 41.8786],
  [-87.6245, 41.8827],
];
const WEST_OAKLAND: [number, number][] = [
  [-122.2905, 37.8095],
  [-122.2835, 37.8055],
];

// A server that takes every request and never answers (until the test ends).
const hanging = new Set<http.ServerResponse>();
let hangHits = 0;
const hang = http.createServer((_req, res) => {
  hangHits++;
  hanging.add(res);
});

let app: FastifyInstance;
let base = '';
let key = '';
let serviceKey = '';
const post = (url: string, body: unknown, k = key) =>
  timed(() =>
    fetch(`${base}${url}`, {
      method: 'POST',
      headers: { apikey: k, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

async function timed(f: () => Promise<Response>): Promise<{ status: number; body: unknown; ms: number }> {
  const t = performance.now();
  const res = await f();
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - t };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

beforeAll(async () => {
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  const hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
  const config = testConfig({
    QUIETWAY_GBFS_SYSTEMS: JSON.stringify([{ id: 'hang', city: 'nyc', url: `${hangUrl}/gbfs.json` }]),
    QUIETWAY_WZDX_URL: `${hangUrl}/wzdx.geojson`,
    QUIETWAY_OPEN_METEO_URL: hangUrl,
    QUIETWAY_PLACES_PROVIDER: 'google',
    QUIETWAY_GOOGLE_PLACES_API_KEY: 'test-key',
    QUIETWAY_GOOGLE_PLACES_URL: hangUrl,
    QUIETWAY_RATE_LIMITS: JSON.stringify({
      directions: { key: [100_000, 60] },
      multimodal: { key: [100_000, 60] },
      explain: { key: [100_000, 60] },
      place_search: { key: [100_000, 60] },
      weather: { key: [100_000, 60] },
    }),
    QUIETWAY_HEADERS_TIMEOUT_MS: '1500',
    QUIETWAY_REQUEST_TIMEOUT_MS: '2000',
    QUIETWAY_MAX_CONNECTIONS_PER_CLIENT: '100',
  });
  fs.mkdirSync(config.graphDir, { recursive: true });
  buildGraph('nyc', [osm('nyc-soho-tiny.osm.pbf')], config.graphDir, 25);
  // Chicago: a real graph with 64 bytes flipped in its middle. The Bay Area: a real graph cut short.
  // London: no file at all.
  const scratch = tempDir('quietway-faulty-');
  const good = fs.readFileSync(buildGraph('chicago', [osm('chicago-loop.osm.pbf')], scratch, 25));
  const flipped = Buffer.from(good);
  for (let i = flipped.length >> 1; i < (flipped.length >> 1) + 64; i++)
    flipped[i] = (flipped[i] as number) ^ 0xff;
  fs.writeFileSync(path.join(config.graphDir, 'chicago.qwg'), flipped);
  fs.writeFileSync(path.join(config.graphDir, 'sf-bay-area.qwg'), good.subarray(0, good.length >> 1));
  app = await buildApp({ config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  key = issueKey(app.repos, { kind: 'app', name: 'faults', source: null, legacyV1: false }).key;
  // Weather and place search take a rider's token or a service key.
  serviceKey = issueKey(app.repos, { kind: 'service', name: 'faults', source: null, legacyV1: false }).key;
}, 300_000);

afterAll(async () => {
  for (const res of hanging) res.destroy();
  hang.closeAllConnections();
  hang.close();
  await app?.close();
});

describe('corrupt, truncated and missing graph files', () => {
  it('start the server with those cities refused and listed as such', async () => {
    const health = (await (await fetch(`${base}/health/`)).json()) as {
      cities: { id: string; state: string }[];
    };
    const state = Object.fromEntries(health.cities.map((c) => [c.id, c.state]));
    expect(state).toMatchObject({
      nyc: 'loaded',
      chicago: 'failed_to_load',
      'sf-bay-area': 'failed_to_load',
      london: 'no_data',
    });
  });

  it('answer 503 with the error body in those cities while New York routes', async () => {
    for (const coordinates of [LOOP, WEST_OAKLAND]) {
      const r = await post('/directions/v2/', { coordinates });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ error: expect.any(String) });
      const [origin, destination] = coordinates;
      const mm = await post('/multi-modal/v2/', { origin, destination });
      expect(mm.status).toBe(503);
      expect(mm.body).toMatchObject({ error: expect.any(String) });
      const ex = await post('/explain-supersafe/', { origin, destination });
      expect(ex.status).toBe(503);
    }
    const ok = await post('/directions/v2/', { coordinates: SOHO });
    expect(ok.status).toBe(200);
    expect((ok.body as { route: unknown }).route).not.toBeNull();
  });
});

describe('upstreams that hang', () => {
  it('never slow directions: latency while GBFS, places, weather and WZDx calls hang', async () => {
    // Before: directions alone.
    for (let i = 0; i < 5; i++) await post('/directions/v2/', { coordinates: SOHO });
    const before: number[] = [];
    for (let i = 0; i < 30; i++) before.push((await post('/directions/v2/', { coordinates: SOHO })).ms);

    // Forty calls that wait on the hanging upstream (until its 4 s time-out) ...
    const hitsBefore = hangHits;
    const waiting = [
      ...Array.from({ length: 20 }, (_, i) =>
        timed(() =>
          fetch(`${base}/functions/v1/weather?latitude=40.72&longitude=-74.0${i}`, {
            headers: { apikey: serviceKey },
          }),
        ),
      ),
      ...Array.from({ length: 20 }, (_, i) =>
        post(
          '/functions/v1/place-search/autocomplete',
          { input: `broadway ${i}`, sessionToken: `s${i}` },
          serviceKey,
        ),
      ),
    ];
    await new Promise((r) => setTimeout(r, 200));
    // ... and directions (and multi-modal, whose bike-share feed hangs) meanwhile.
    const during: number[] = [];
    const mm: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await post('/directions/v2/', { coordinates: SOHO });
      expect(r.status).toBe(200);
      during.push(r.ms);
    }
    for (let i = 0; i < 5; i++) {
      const r = await post('/multi-modal/v2/', { origin: SOHO[0], destination: SOHO[1] });
      expect(r.status).toBe(200);
      mm.push(r.ms);
    }
    const pending = hanging.size;
    const answers = await Promise.all(waiting);

    // The upstream was being waited on the whole time (GBFS and WZDx fetch it too; weather asks
    // once for nearby points).
    expect(hangHits - hitsBefore).toBeGreaterThanOrEqual(20);
    expect(pending).toBeGreaterThanOrEqual(20);
    // Those calls end at the 4 s upstream time-out in the spec's errors (weather: 500 "upstream
    // failure"; place search: 504), never a hang.
    answers.forEach((a, i) => {
      expect(a.status).toBe(i < 20 ? 500 : 504);
      expect(a.body).toMatchObject({ error: expect.any(String) });
      expect(a.ms).toBeLessThan(10_000);
    });
    console.log(
      `directions median ${median(before).toFixed(1)} ms alone, ${median(during).toFixed(1)} ms (max ${Math.max(...during).toFixed(1)}) with 40 calls on a hanging upstream; multi-modal median ${median(mm).toFixed(1)} ms`,
    );
    // Same latency within noise on this shared machine: no request waits on an upstream.
    expect(median(during)).toBeLessThan(median(before) * 3 + 20);
    expect(Math.max(...during)).toBeLessThan(1000);
    expect(Math.max(...mm)).toBeLessThan(1000);
  }, 60_000);
});

describe('slow clients', () => {
  /** Opens a connection from `local` that sends its headers a line every `everyMs`, never ending them. */
  function slowloris(port: number, local: string, everyMs: number) {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: local });
    let closedAt: number | null = null;
    const started = Date.now();
    socket.on('connect', () => socket.write('GET /health/ HTTP/1.1\r\nHost: x\r\n'));
    const timer = setInterval(() => socket.writable && socket.write(`X-Slow: ${Date.now()}\r\n`), everyMs);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      closedAt = Date.now() - started;
    });
    return { closedAfter: () => closedAt, destroy: () => socket.destroy() };
  }

  it('slowloris from another address cannot hold the server: routing answers meanwhile, the slow connections are cut', async () => {
    const port = Number(new URL(base).port);
    // 30 connections from 127.0.0.2 that trickle their headers, a line every 300 ms.
    const slow = Array.from({ length: 30 }, () => slowloris(port, '127.0.0.2', 300));
    await new Promise((r) => setTimeout(r, 300));
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await post('/directions/v2/', { coordinates: SOHO });
      expect(r.status).toBe(200);
      times.push(r.ms);
    }
    expect(Math.max(...times)).toBeLessThan(1000);
    // The headers deadline (1.5 s here) cuts every one of them.
    await new Promise((r) => setTimeout(r, 3500));
    const closed = slow.map((s) => s.closedAfter());
    for (const s of slow) s.destroy();
    expect(closed.every((c) => c !== null && c < 3500)).toBe(true);
  }, 30_000);
});
