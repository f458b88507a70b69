// Start-up does not wait for the city graphs: the app answers at once, /health/ lists each city as
// loading, ready or failed, a request into a city still loading answers 503 with Retry-After, and
// the city routes as soon as its own graph is in (with the road changes stored for it applied).
// "Still loading" is made deterministic without touching the engine: the graph file is a named pipe
// (FIFO) that the real engine reads on libuv's pool until the test writes the graph into it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import type { Config } from '../../server/src/config.js';
import { buildGraph, SHARED_DATA, tempDir, testConfig } from '../helpers.js';

const SOHO: [number, number][] = [
  [-74.0035, 40.7262],
  [-73.9968, 40.7225],
];
const MOORGATE: [number, number][] = [
  [-0.0886, 51.5186],
  [-0.0905, 51.5163],
];
// The Loop, Chicago (a city whose graph file is corrupt in these tests).
const LOOP: [number, number][] = [
  [-87.6298, 41.8786],
  [-87.6245, 41.8827],
];

/** Built graphs by city: the bytes a test writes into a pipe. */
const built: Record<string, Buffer> = {};

beforeAll(() => {
  const scratch = tempDir('quietway-loading-');
  try {
    for (const [city, osm] of [
      ['nyc', 'nyc-soho-tiny.osm.pbf'],
      ['london', 'london-moorgate.osm.pbf'],
    ] as const) {
      const file = buildGraph(city, [path.join(SHARED_DATA, 'osm', osm)], scratch);
      built[city] = fs.readFileSync(file);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}, 120_000);

/** Pipes that still hold an engine's read, and apps to close, after each test. */
let pipes: string[] = [];
let apps: FastifyInstance[] = [];
afterEach(async () => {
  // A test that failed before writing its graph: an empty write ends the engine's read (the load fails).
  for (const p of pipes) {
    try {
      fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // No reader (the engine has not opened it, or is done with it).
    }
  }
  for (const app of apps) await app.close();
  pipes = [];
  apps = [];
});

/** A graph file that loads only once `release` writes the city's graph into it. */
function pipedGraph(config: Config, city: string): { release: () => Promise<void> } {
  fs.mkdirSync(config.graphDir, { recursive: true });
  const file = path.join(config.graphDir, `${city}.qwg`);
  const r = spawnSync('mkfifo', [file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mkfifo: ${r.stderr}`);
  const b = built[city];
  if (!b) throw new Error(`no graph built for ${city}`);
  pipes.push(file);
  return { release: () => fs.promises.writeFile(file, b) };
}

async function start(config: Config, logs: string[] = []) {
  const app = await buildApp({
    config,
    waitForCities: false,
    logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
  });
  apps.push(app);
  const key = issueKey(app.repos, { kind: 'app', name: 'loading', source: null, legacyV1: false }).key;
  const post = (url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: { apikey: key }, payload });
  const health = async () => {
    const res = await app.inject({ method: 'GET', url: '/health/' });
    expect(res.statusCode).toBe(200);
    return res.json() as {
      status: string;
      cities_loading: number;
      cities: {
        id: string;
        state: string;
        load: { state: string; seconds: number; queued: boolean; error: string | null } | null;
        graph_version: string | null;
      }[];
    };
  };
  const city = async (id: string) => (await health()).cities.find((c) => c.id === id);
  return { app, post, health, city };
}

/** Waits (briefly) for a condition the server reaches by itself, such as a corrupt graph failing. */
async function until(what: string, ok: () => Promise<boolean>) {
  for (let i = 0; i < 400; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a city whose graph is still loading', () => {
  it('is listed as loading, answers 503 with Retry-After, then routes once its graph is in', async () => {
    const config = testConfig({ QUIETWAY_REPORT_ANALYSIS_MS: '0' });
    const nyc = pipedGraph(config, 'nyc');
    const logs: string[] = [];
    const { app, post, health, city } = await start(config, logs);

    const h = await health();
    expect(h.status).toBe('ok');
    expect(h.cities_loading).toBe(1);
    expect(h.cities.find((c) => c.id === 'nyc')).toMatchObject({
      state: 'loading',
      load: { state: 'loading', seconds: expect.any(Number), queued: false, error: null },
      graph_version: null,
    });
    // Cities without a graph file have no load.
    expect(h.cities.find((c) => c.id === 'london')).toMatchObject({ state: 'no_data', load: null });

    const loading = {
      error: 'Routing for New York City is starting: its graph is still loading',
      details: 'Try again in 5 seconds.',
      code: 'CITY_LOADING',
      retry_after_seconds: 5,
    };
    const [origin, destination] = SOHO;
    for (const [url, payload] of [
      ['/directions/v2/', { coordinates: SOHO }],
      ['/multi-modal/v2/', { origin, destination }],
      ['/explain-supersafe/', { origin, destination }],
    ] as const) {
      const res = await post(url, payload);
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['retry-after'], url).toBe('5');
      expect(res.json(), url).toEqual(loading);
    }
    const roads = await app.inject({
      method: 'GET',
      url: '/safety-map/nyc/roads/?bbox=-74.004,40.722,-73.996,40.727',
    });
    expect(roads.statusCode).toBe(503);
    expect(roads.headers['retry-after']).toBe('5');

    // A road change stored while the city loads (as another process would) is applied as it arrives.
    app.repos.reports.createChange({
      city: 'nyc',
      kind: 'weighting',
      spec: { kind: 'weighting', model: { supersafe: { push_factor: 7 } } },
      reportId: null,
      disruptionId: null,
      flag: null,
      createdBy: 'test',
    });

    // Still loading a while later: nothing but the pipe holds it.
    await new Promise((r) => setTimeout(r, 200));
    expect((await city('nyc'))?.load?.seconds).toBeGreaterThanOrEqual(0.2);
    expect(app.engine.city('nyc')).toBeUndefined();

    await nyc.release();
    await app.engine.ready;
    const after = await health();
    expect(after.cities_loading).toBe(0);
    expect(after.cities.find((c) => c.id === 'nyc')).toMatchObject({
      state: 'loaded',
      load: { state: 'ready', seconds: expect.any(Number), queued: false, error: null },
      graph_version: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    const routed = await post('/directions/v2/', { coordinates: SOHO });
    expect(routed.statusCode).toBe(200);
    expect(routed.json().route).not.toBeNull();
    const weighting = JSON.parse(app.engine.city('nyc')?.engine.weighting() ?? '{}');
    expect(weighting.supersafe.push_factor).toBe(7);

    const messages = logs.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toContain('loading the graph of nyc');
    expect(messages.some((m) => /^loaded New York City in \d+\.\d s$/.test(m))).toBe(true);
    expect(messages.some((m) => /^city graphs loaded in \d+\.\d s$/.test(m))).toBe(true);
  });

  it('lists a corrupt graph as failed while another still loads, and keeps its outage answer', async () => {
    const config = testConfig({ QUIETWAY_REPORT_ANALYSIS_MS: '0' });
    const nyc = pipedGraph(config, 'nyc');
    fs.writeFileSync(path.join(config.graphDir, 'chicago.qwg'), 'not a graph');
    const { app, post, health, city } = await start(config);

    await until('chicago to fail', async () => (await city('chicago'))?.load?.state === 'failed');
    const h = await health();
    expect(h.cities_loading).toBe(1);
    const chicago = h.cities.find((c) => c.id === 'chicago');
    expect(chicago).toMatchObject({
      state: 'failed_to_load',
      load: { state: 'failed', seconds: expect.any(Number), queued: false, error: expect.any(String) },
    });
    // The error says why without the server's folders (the health check is public).
    expect(chicago?.load?.error).not.toContain(config.graphDir);
    expect(h.cities.find((c) => c.id === 'nyc')).toMatchObject({
      state: 'loading',
      load: { state: 'loading' },
    });

    // A failed city answers as before: 503, no Retry-After (it will not come by waiting).
    const failed = await post('/directions/v2/', { coordinates: LOOP });
    expect(failed.statusCode).toBe(503);
    expect(failed.headers['retry-after']).toBeUndefined();
    expect(failed.json()).toEqual({ error: 'Routing for Chicago is not available right now' });
    expect((await post('/directions/v2/', { coordinates: SOHO })).statusCode).toBe(503);

    await nyc.release();
    await app.engine.ready;
    expect((await post('/directions/v2/', { coordinates: SOHO })).statusCode).toBe(200);
    expect(await city('chicago')).toMatchObject({ state: 'failed_to_load', load: { state: 'failed' } });
    expect(app.engine.failed.map((f) => f.id)).toEqual(['chicago']);
  });

  it('loads QUIETWAY_LOAD_CONCURRENCY graphs at a time; each city routes as soon as its own is in', async () => {
    const config = testConfig({ QUIETWAY_REPORT_ANALYSIS_MS: '0', QUIETWAY_LOAD_CONCURRENCY: '1' });
    const london = pipedGraph(config, 'london');
    const nyc = pipedGraph(config, 'nyc');
    const { app, post, city } = await start(config);

    // Files load in name order: London first, New York waits for the one loader.
    expect((await city('london'))?.load).toMatchObject({ state: 'loading', queued: false });
    expect((await city('nyc'))?.load).toMatchObject({ state: 'loading', queued: true });

    await london.release();
    await until('london to load', async () => (await city('london'))?.state === 'loaded');
    expect((await post('/directions/v2/', { coordinates: MOORGATE })).statusCode).toBe(200);
    const waiting = await post('/directions/v2/', { coordinates: SOHO });
    expect(waiting.statusCode).toBe(503);
    expect(waiting.headers['retry-after']).toBe('5');
    await until('nyc to start loading', async () => (await city('nyc'))?.load?.queued === false);

    await nyc.release();
    await app.engine.ready;
    expect((await post('/directions/v2/', { coordinates: SOHO })).statusCode).toBe(200);
    expect(app.engine.cities().map((c) => c.id)).toEqual(['london', 'nyc']);
  });
});

describe('buildApp', () => {
  it('waits for every city graph by default', async () => {
    const config = testConfig();
    fs.mkdirSync(config.graphDir, { recursive: true });
    fs.writeFileSync(path.join(config.graphDir, 'nyc.qwg'), built.nyc ?? '');
    const app = await buildApp({ config });
    apps.push(app);
    expect(app.engine.city('nyc')).toBeDefined();
    expect(app.engine.loading()).toEqual([]);
  });
});
