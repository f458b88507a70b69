// Cities sharded across nodes (QUIETWAY_CITIES): a process loads only the graphs it is given and
// answers 503 for a configured city it does not load (a load balancer can send that request to the
// next node), and leaves that city's reports to a node that loads it; without the variable (or with
// it empty) every graph in the folder is loaded.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { ConfigError, loadConfig } from '../../server/src/config.js';
import { buildGraph, SHARED_DATA, storeEnv, tempDir } from '../helpers.js';

const dataDir = tempDir();
const apps: FastifyInstance[] = [];
const SOHO: [number, number][] = [
  [-74.0035, 40.7262],
  [-73.9968, 40.7225],
];
const MOORGATE: [number, number][] = [
  [-0.0886, 51.5186],
  [-0.0905, 51.5163],
];

const start = async (env: Record<string, string> = {}) => {
  const config = loadConfig({
    QUIETWAY_DATA_DIR: dataDir,
    QUIETWAY_LOG_LEVEL: 'silent',
    QUIETWAY_REPORT_ANALYSIS_MS: '0',
    QUIETWAY_OPEN_METEO_URL: 'http://127.0.0.1:9',
    ...storeEnv(dataDir),
    ...env,
  });
  const app = await buildApp({ config });
  apps.push(app);
  return app;
};

const directions = async (app: FastifyInstance, coordinates: [number, number][]) => {
  const apikey = issueKey(app.repos, { kind: 'app', name: 'shard', source: null, legacyV1: false }).key;
  return app.inject({
    method: 'POST',
    url: '/directions/v2/',
    headers: { apikey },
    payload: { coordinates },
  });
};

beforeAll(() => {
  const graphs = path.join(dataDir, 'graphs');
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-soho-tiny.osm.pbf')], graphs);
  buildGraph('london', [path.join(SHARED_DATA, 'osm/london-moorgate.osm.pbf')], graphs);
}, 120_000);
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe('QUIETWAY_CITIES', () => {
  it('loads only the cities it names; the others answer 503', async () => {
    const nyc = await start({ QUIETWAY_CITIES: 'nyc' });
    expect(nyc.engine.cities().map((c) => c.id)).toEqual(['nyc']);
    expect((await directions(nyc, SOHO)).statusCode).toBe(200);
    const london = await directions(nyc, MOORGATE);
    expect(london.statusCode).toBe(503);
    expect(london.json().error).toMatch(/London.*not available/);

    const both = await start({ QUIETWAY_CITIES: ' london , nyc ' });
    expect(both.engine.cities().map((c) => c.id)).toEqual(['london', 'nyc']);
    expect((await directions(both, MOORGATE)).statusCode).toBe(200);
    const every = await start();
    expect(every.engine.cities().map((c) => c.id)).toEqual(['london', 'nyc']);

    // A report in London waits for a node that loads London instead of being closed as outside
    // every routed city by one that does not.
    const report = nyc.repos.reports.create({
      issueType: 'road_unsafe',
      issueSubtype: null,
      description: '',
      roadName: '',
      location: MOORGATE[0] as [number, number],
      userId: null,
      apiKeyId: null,
      source: null,
      via: 'partner',
      seenRoute: null,
    });
    expect(await nyc.reportWorker.run()).toBe(0);
    expect(nyc.repos.reports.byId(report.id)?.status).toBe('received');
    expect(await both.reportWorker.run()).toBe(1);
    expect(nyc.repos.reports.byId(report.id)).toMatchObject({ city: 'london' });
    expect(nyc.repos.reports.byId(report.id)?.status).not.toBe('received');
  }, 60_000);

  it('refuses a malformed list at start', () => {
    expect(() => loadConfig({ QUIETWAY_CITIES: 'nyc;london' })).toThrow(ConfigError);
    expect(loadConfig({ QUIETWAY_CITIES: ' ' }).cities).toBeNull();
  });
});
