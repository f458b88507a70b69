// All five spec cities over the real extracts, and honest about where each city's data ends: the LA
// Westwood sample routed, San Francisco (outside the West Oakland extract, inside the Bay Area
// outline) and the East Village hole of the NYC sample answered `route: null` by the snap radius,
// and /health/ listing every city with its state, data bbox and polygon coverage.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { buildGraphCommand } from '../../server/src/commands/build-graph.js';
import type { Config } from '../../server/src/config.js';
import { native } from '../../server/src/native.js';
import { cityList } from '../../server/src/routing/coverage.js';
import { checkSnapRadius } from '../../server/src/routing/snapping.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

let config: Config;
let app: FastifyInstance;
let key: string;
let legacyKey: string;
const logs: string[] = [];

const post = (coordinates: number[][], extra: object = {}, url = '/directions/v2/', k = key) =>
  app.inject({ method: 'POST', url, headers: { apikey: k }, payload: { coordinates, ...extra } });

const osm = (f: string) => path.join(SHARED_DATA, 'osm', f);

beforeAll(async () => {
  config = testConfig();
  // The sample extracts `build-graph --defaults` uses for these three cities.
  for (const [id, file] of [
    ['los-angeles', 'la-ucla-westwood.osm.pbf'],
    ['sf-bay-area', 'west-oakland.osm.bz2'],
    ['nyc', 'nyc-manhattan-below-42nd.osm.pbf'],
  ] as const) {
    buildGraph(id, [osm(file)], config.graphDir, 25);
  }
  // A Chicago graph that cannot load; London has none.
  fs.writeFileSync(path.join(config.graphDir, 'chicago.qwg'), 'not a graph');
  app = await buildApp({
    config,
    logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
  });
  key = issueKey(app.repos, { kind: 'app', name: 'test', source: null, legacyV1: false }).key;
  legacyKey = issueKey(app.repos, { kind: 'app', name: 'old', source: null, legacyV1: true }).key;
}, 300_000);
afterAll(() => app?.close());

const RADIUS = 250;
const { haversineMeters } = native();

// About E 12th St by 3rd Avenue, in the East Village hole of the NYC sample (no data between lat
// 40.730 and 40.736 east of about -74.00), to Union Square: the engine would snap the first point
// to Stuyvesant Street, 335 m south, and ride 5 km around the hole.
const HOLE_TO_UNION_SQUARE = [
  [-73.988, 40.733],
  [-73.9903, 40.7359],
];

/** Every reported waypoint lies within the snap radius of the point asked for. */
function expectWithinRadius(coordinates: number[][], waypoints: { location: number[] }[]) {
  expect(waypoints).toHaveLength(coordinates.length);
  waypoints.forEach((w, i) => {
    expect(haversineMeters(coordinates[i] as number[], w.location)).toBeLessThanOrEqual(RADIUS);
  });
}

describe('Los Angeles (the UCLA / Westwood sample)', () => {
  // Bruin Plaza on the UCLA campus to Hilgard Avenue.
  const WESTWOOD = [
    [-118.4448, 34.0708],
    [-118.4387, 34.0757],
  ];

  it('routes a cycling trip in Westwood', async () => {
    const res = await post(WESTWOOD, { profile: 'cycling' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.route).not.toBeNull();
    expect(body.route.distance).toBeGreaterThan(700);
    expect(body.route.distance).toBeLessThan(2500);
    expect(body.graph_version).toMatch(/^[0-9a-f]{16}$/);
    expectWithinRadius(WESTWOOD, body.waypoints);
  });

  it('routes a walking trip in Westwood', async () => {
    const res = await post(WESTWOOD, { profile: 'walking' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.route).not.toBeNull();
    expect(body.route.steps.every((s: { mode: string }) => s.mode === 'walking')).toBe(true);
    expectWithinRadius(WESTWOOD, body.waypoints);
  });
});

describe('SF Bay Area (the West Oakland sample)', () => {
  // Civic Center to Alamo Square: inside the nine-county outline, across the Bay from the data.
  const SAN_FRANCISCO = [
    [-122.4194, 37.7793],
    [-122.4346, 37.7764],
  ];

  it('answers two San Francisco points with route null (v2)', async () => {
    const res = await post(SAN_FRANCISCO);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.route).toBeNull();
    // Nothing within the engine's reach to snap to: no waypoints to report.
    expect(body.waypoints).toEqual([]);
    expect(body.metadata.waypoint_count).toBe(2);
  });

  it('answers them NoRoute in v1 too', async () => {
    const res = await post(SAN_FRANCISCO, {}, '/directions/', legacyKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ code: 'NoRoute', routes: [], waypoints: [], edge_ids: null });
  });

  it('notes in the log a request inside the polygon but outside the graph data', () => {
    const line = logs.find(
      (l) => l.includes('outside the data its graph holds') && l.includes('sf-bay-area'),
    );
    expect(line).toBeDefined();
    const entry = JSON.parse(line as string);
    expect(entry.outsideDataBbox).toBe(true);
    expect(entry.snapDistancesM).toEqual([null, null]);
  });
});

describe('New York City: the East Village hole of the sample extract', () => {
  it('answers route null with the waypoints where each point would have snapped (v2)', async () => {
    for (const profile of ['cycling', 'walking']) {
      const res = await post(HOLE_TO_UNION_SQUARE, { profile });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.route).toBeNull();
      expect(body.waypoints).toHaveLength(2);
      expect(Object.keys(body.waypoints[0]).sort()).toEqual(['location', 'name']);
      const [far, near] = body.waypoints.map((w: { location: number[] }, i: number) =>
        haversineMeters(HOLE_TO_UNION_SQUARE[i] as number[], w.location),
      );
      expect(far).toBeGreaterThan(RADIUS);
      expect(near).toBeLessThanOrEqual(RADIUS);
    }
  });

  it('applies the same rule with disruptions in force (the route planned beside them)', async () => {
    app.repos.disruptions.create({
      source: 'curator',
      city: 'nyc',
      name: 'Union Square works',
      notes: '',
      severity: 'avoid',
      location: [-73.9903, 40.7359],
      startDate: '2020-01-01',
      startMinute: 0,
      endDate: '2099-01-01',
      endMinute: 0,
    });
    const res = await post(HOLE_TO_UNION_SQUARE);
    expect(res.json().route).toBeNull();
    expect(res.json().waypoints).toHaveLength(2);
    // A trip on the data still gets its route, with the disruption beside it.
    const on = (
      await post([
        [-73.9915, 40.7375],
        [-73.9903, 40.7359],
      ])
    ).json();
    expect(on.route).not.toBeNull();
    expect(on.disruptions?.[0]?.name).toBe('Union Square works');
  });

  it('explains no route for the same trip (POST /explain-supersafe/)', async () => {
    const [origin, destination] = HOLE_TO_UNION_SQUARE;
    const res = await app.inject({
      method: 'POST',
      url: '/explain-supersafe/',
      headers: { apikey: key },
      payload: { origin, destination },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ summary: null, no_route: true });
  });

  it('offers no multi-modal option for the same trip (POST /multi-modal/v2/)', async () => {
    const [origin, destination] = HOLE_TO_UNION_SQUARE;
    const res = await app.inject({
      method: 'POST',
      url: '/multi-modal/v2/',
      headers: { apikey: key },
      payload: { origin, destination },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().options).toEqual([]);
  });

  it('answers the same in v1: NoRoute with the snapped waypoints', async () => {
    const res = await post(HOLE_TO_UNION_SQUARE, {}, '/directions/', legacyKey);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.code).toBe('NoRoute');
    expect(body.routes).toEqual([]);
    expect(body.waypoints).toHaveLength(2);
  });

  it('never answers the issue’s E 9th St to Union Square trip from a road beyond the radius', async () => {
    const E9TH_TO_UNION_SQUARE = [
      [-73.9885, 40.7302],
      [-73.9903, 40.7359],
    ];
    for (const url of ['/directions/v2/', '/directions/']) {
      const res = await post(E9TH_TO_UNION_SQUARE, {}, url, url === '/directions/' ? legacyKey : key);
      const body = res.json();
      const routed = url === '/directions/' ? body.routes.length > 0 : body.route !== null;
      if (routed) expectWithinRadius(E9TH_TO_UNION_SQUARE, body.waypoints);
    }
  });

  it('still routes trips whose waypoints lie on the data', async () => {
    const res = await post([
      [-74.0089, 40.70797],
      [-74.00863, 40.71196],
    ]);
    expect(res.json().route).not.toBeNull();
  });
});

describe('the snap radius is configuration', () => {
  it('QUIETWAY_SNAP_RADIUS_M widens it', async () => {
    // A point south of the Westwood sample's data, 349 m from its nearest road.
    const SOUTH_OF_DATA = [
      [-118.4452, 34.0689],
      [-118.4397, 34.0635],
    ];
    expect((await post(SOUTH_OF_DATA)).json().route).toBeNull();
    const wideConfig = testConfig({ QUIETWAY_SNAP_RADIUS_M: '400' });
    expect(wideConfig.snapRadiusM).toBe(400);
    fs.mkdirSync(wideConfig.graphDir, { recursive: true });
    fs.copyFileSync(
      path.join(config.graphDir, 'los-angeles.qwg'),
      path.join(wideConfig.graphDir, 'los-angeles.qwg'),
    );
    const wide = await buildApp({ config: wideConfig });
    try {
      const k = issueKey(wide.repos, { kind: 'app', name: 't', source: null, legacyV1: false }).key;
      const res = await wide.inject({
        method: 'POST',
        url: '/directions/v2/',
        headers: { apikey: k },
        payload: { coordinates: SOUTH_OF_DATA },
      });
      expect(res.json().route).not.toBeNull();
    } finally {
      await wide.close();
    }
  });

  it('the rule: every waypoint within the radius, and nothing to snap to is outside it', () => {
    const asked = [
      [-73.988, 40.733],
      [-73.9903, 40.7359],
    ];
    const snapped = [
      { name: 'Stuyvesant Street', location: [-73.987733, 40.729976] },
      { name: '', location: [-73.989545, 40.73604] },
    ];
    const v = checkSnapRadius(250, asked, snapped);
    expect(v.within).toBe(false);
    expect(v.distances[0]).toBeGreaterThan(300);
    expect(v.distances[1]).toBeLessThan(100);
    expect(checkSnapRadius(400, asked, snapped).within).toBe(true);
    expect(checkSnapRadius(400, asked, [snapped[0] ?? null, null]).within).toBe(false);
  });
});

describe('GET /health/', () => {
  it('lists the five spec cities with their state, data bbox and polygon coverage', async () => {
    const res = await app.inject({ method: 'GET', url: '/health/' });
    expect(res.statusCode).toBe(200);
    const cities = res.json().cities as {
      id: string;
      state: string;
      data_bbox: number[] | null;
      polygon_coverage: { share: number; cell_m: number } | null;
    }[];
    expect(cities.map((c) => c.id)).toEqual(Object.keys(cityList()));
    expect(cities.map((c) => c.id)).toEqual(['nyc', 'los-angeles', 'sf-bay-area', 'chicago', 'london']);
    const byId = Object.fromEntries(cities.map((c) => [c.id, c]));
    expect(byId.chicago).toMatchObject({ state: 'failed_to_load', graph_version: null, data_bbox: null });
    expect(byId.london).toMatchObject({ state: 'no_data', graph_version: null, polygon_coverage: null });
    for (const id of ['nyc', 'los-angeles', 'sf-bay-area']) {
      const c = byId[id];
      expect(c?.state).toBe('loaded');
      const [minLon, minLat, maxLon, maxLat] = (c?.data_bbox ?? []) as number[];
      expect(minLon).toBeLessThan(maxLon as number);
      expect(minLat).toBeLessThan(maxLat as number);
      expect(c?.polygon_coverage?.cell_m).toBe(250);
      expect(c?.polygon_coverage?.share).toBeGreaterThan(0);
      expect(c?.polygon_coverage?.share).toBeLessThan(0.1);
    }
    // Westwood lies inside its data bbox; the sample covers a sliver of each city.
    const la = byId['los-angeles']?.data_bbox as number[];
    expect(la[0]).toBeLessThan(-118.4448);
    expect(la[2]).toBeGreaterThan(-118.4387);
  });

  it('stores the coverage beside each graph, keyed by its graph version', () => {
    const stored = JSON.parse(fs.readFileSync(path.join(config.graphDir, 'nyc.coverage.json'), 'utf8'));
    expect(stored).toMatchObject({ graph_version: app.engine.city('nyc')?.graphVersion, cell_m: 250 });
    expect(stored.covered_cells).toBeGreaterThan(100);
  });
});

describe('quietway build-graph', () => {
  it('--defaults builds a city from data/osm/<city>/ and ends with its polygon coverage', async () => {
    const own = testConfig();
    fs.mkdirSync(path.join(own.osmDir, 'los-angeles'), { recursive: true });
    fs.symlinkSync(osm('la-ucla-westwood.osm.pbf'), path.join(own.osmDir, 'los-angeles', 'westwood.osm.pbf'));
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      expect(await buildGraphCommand(own, ['--defaults'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    // Only the city with extracts of its own is built once any city has some.
    expect(fs.readdirSync(own.graphDir).filter((f) => f.endsWith('.qwg'))).toEqual(['los-angeles.qwg']);
    const stored = JSON.parse(fs.readFileSync(path.join(own.graphDir, 'los-angeles.coverage.json'), 'utf8'));
    expect(stored.polygon_share).toBeGreaterThan(0);
    expect(lines.join('\n')).toMatch(/polygon covered +0\.\d+ % of Los Angeles's polygon/);
  });

  it('adds the coverage to the JSON summary of a single build', async () => {
    const own = testConfig();
    const summary = path.join(own.dataDir, 'summary.json');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const argv = ['--city', 'sf-bay-area', '--osm', osm('west-oakland.osm.bz2'), '--summary-json', summary];
      expect(await buildGraphCommand(own, [...argv, '--quiet'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const json = JSON.parse(fs.readFileSync(summary, 'utf8'));
    expect(json.city).toBe('sf-bay-area');
    expect(json.polygon_coverage).toMatchObject({ cell_m: 250, graph_version: json.graph_version });
  });
});
