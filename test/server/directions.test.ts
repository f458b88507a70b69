// POST /directions/v2/ and the deprecated v1 on real extracts. The expectations of the "by hand"
// cases were checked against the OSM data (tags quoted beside each).
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { decodePolyline } from '../../server/src/routing/polyline.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

let app: FastifyInstance;
let key: string;
let legacyKey: string;

const post = (payload: unknown, url = '/directions/v2/', k = key) =>
  app.inject({ method: 'POST', url, headers: { apikey: k }, payload: payload as object });

beforeAll(async () => {
  const config = testConfig();
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir, 25);
  buildGraph('london', [path.join(SHARED_DATA, 'osm/london-clerkenwell.osm.pbf')], config.graphDir, 25);
  app = await buildApp({ config });
  key = issueKey(app.repos, { kind: 'app', name: 'test', source: null, legacyV1: false }).key;
  legacyKey = issueKey(app.repos, { kind: 'app', name: 'old', source: null, legacyV1: true }).key;
}, 120_000);
afterAll(() => app.close());

// Whitehall Street, way 5672006: oneway=yes, oneway:bicycle=no, cycleway:left=track with
// cycleway:left:oneway=-1 — riders may go north against the cars.
const WHITEHALL_SOUTH: [number, number] = [-74.01291, 40.70268];
const WHITEHALL_NORTH: [number, number] = [-74.013, 40.70305];

describe('POST /directions/v2/', () => {
  it('answers a cycling route with every field of the spec', async () => {
    const res = await post({
      coordinates: [
        [-74.0089, 40.70797],
        [-74.00863, 40.71196],
      ],
      departure_time: '2026-11-23T12:00',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.search_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.graph_version).toMatch(/^[0-9a-f]{16}$/);
    expect(body.sublabel).toBeNull();
    expect(body.metadata).toEqual({
      profile: 'cycling',
      supersafe: true,
      nighttime: false,
      waypoint_count: 2,
    });
    expect(body.disruptions).toBeUndefined();
    const r = body.route;
    expect(r.geometry.type).toBe('LineString');
    expect(r.distance).toBeGreaterThan(400);
    expect(r.duration).toBeGreaterThanOrEqual(r.distance / (15 / 3.6) - 1);
    expect(typeof r.safety_code).toBe('number');
    expect(r.steps[0].maneuver.type).toBe('Start');
    const last = r.steps.at(-1);
    expect(last.maneuver.instruction).toBe('Arrive at destination');
    expect(last.voice_instructions).toEqual([]);
    expect(last.safety_classification).toBeUndefined();
    for (const s of r.steps) {
      expect(s.geometry.coordinates[0]).toEqual(s.maneuver.location);
      expect(s.mode).toBe('cycling');
    }
    expect(body.waypoints).toHaveLength(2);
    expect(body.waypoints[0]).toEqual({
      name: expect.any(String),
      location: [expect.any(Number), expect.any(Number)],
    });
  });

  it('rides a contraflow lane against the one-way traffic (Whitehall Street)', async () => {
    for (const coordinates of [
      [WHITEHALL_SOUTH, WHITEHALL_NORTH],
      [WHITEHALL_NORTH, WHITEHALL_SOUTH],
    ]) {
      const r = (await post({ coordinates })).json().route;
      // Both ways straight along the street, ~42 m: no detour round the block.
      expect(r.distance).toBeLessThan(60);
      expect(
        r.steps
          .filter((s: { maneuver: { type: string } }) => s.maneuver.type !== 'Arrive')
          .map((s: { name: string }) => s.name),
      ).toEqual(['Whitehall Street']);
    }
  });

  it('follows a signed greenway and reports its route and class', async () => {
    // Hudson River Greenway (highway=cycleway, member of the Manhattan Waterfront Greenway route).
    // The end lies at the north edge of the extract's data (farther north snaps beyond the radius).
    const r = (
      await post({
        coordinates: [
          [-74.0168, 40.706],
          [-74.0143, 40.7138],
        ],
      })
    ).json().route;
    const greenway = r.steps.filter((s: { name: string }) => s.name === 'Hudson River Greenway');
    expect(greenway.length).toBeGreaterThan(0);
    for (const s of greenway) {
      expect(s.cycle_routes).toContain('Manhattan Waterfront Greenway');
      expect(s.safety_classification).toBe('cycleway');
    }
    const onGreenway = greenway.reduce((a: number, s: { distance: number }) => a + s.distance, 0);
    expect(onGreenway / r.distance).toBeGreaterThan(0.7);
  });

  it('names the roundabout exit and the road taken after it (Museum of London Rotunda)', async () => {
    // South on Aldersgate Street into the Rotunda (junction=roundabout, ways 49780462…), clockwise:
    // the first exit is London Wall eastbound.
    const res = await post({
      coordinates: [
        [-0.0972, 51.5196],
        [-0.0935, 51.5171],
      ],
      supersafe: false,
      departure_time: '2026-11-23T12:00',
    });
    const steps = res.json().route.steps;
    const i = steps.findIndex((s: { maneuver: { type: string } }) => s.maneuver.type === 'roundabout');
    expect(i).toBeGreaterThan(0);
    expect(steps[i].exits).toBe('1');
    expect(steps[i].maneuver.instruction).toBe('At the roundabout, take the 1st exit');
    expect(steps[i + 1].name).toBe('London Wall');
    expect(steps[i - 1].voice_instructions.at(-1).announcement).toMatch(
      /^At the roundabout, take the 1st exit/,
    );
    expect(steps.filter((s: { exits: string }) => s.exits !== '').length).toBe(1);
  });

  it('reroutes to leave in the direction of a bearing', async () => {
    const free = (await post({ coordinates: [WHITEHALL_SOUTH, WHITEHALL_NORTH] })).json().route;
    const res = await post({ coordinates: [WHITEHALL_SOUTH, WHITEHALL_NORTH], bearing: 200 });
    const r = res.json().route;
    expect(r).not.toBeNull();
    const heading = r.steps[0].maneuver.bearing_after;
    const diff = Math.abs(((heading - 200 + 540) % 360) - 180);
    expect(diff).toBeLessThanOrEqual(45);
    expect(r.distance).toBeGreaterThan(free.distance + 20);
  });

  it('prefers lit streets at night (New York has lighting data)', async () => {
    // By day the SuperSafe route rides William Street north to Beekman Street (no lit tag); after
    // dark it leaves it at Maiden Lane for the lit Nassau Street.
    const coordinates = [
      [-74.0089, 40.70797],
      [-74.00863, 40.71196],
    ];
    const day = (await post({ coordinates, departure_time: '2026-06-21T13:00' })).json();
    const night = (await post({ coordinates, departure_time: '2026-06-21T23:30' })).json();
    expect(day.metadata.nighttime).toBe(false);
    expect(night.metadata.nighttime).toBe(true);
    expect(night.sublabel).toBe('Prefers well-lit roads');
    const names = (b: { route: { steps: { name: string }[] } }) => b.route.steps.map((s) => s.name);
    expect(names(day)).toContain('William Street');
    expect(names(day)).not.toContain('Nassau Street');
    expect(names(night)).toEqual(expect.arrayContaining(['Maiden Lane', 'Nassau Street']));
    const on = (b: { route: { steps: { name: string; distance: number }[] } }, street: string) =>
      b.route.steps.filter((s) => s.name === street).reduce((a, s) => a + s.distance, 0);
    expect(on(night, 'William Street')).toBeLessThan(on(day, 'William Street') - 100);
    const litShare = (b: { route: { distance: number; steps: { lit: boolean; distance: number }[] } }) =>
      b.route.steps.filter((s) => s.lit).reduce((a, s) => a + s.distance, 0) / b.route.distance;
    expect(litShare(night)).toBeGreaterThan(litShare(day));
    // The override forces either regime.
    const forcedDay = (
      await post({ coordinates, departure_time: '2026-06-21T23:30', nighttime: false })
    ).json();
    expect(forcedDay.metadata.nighttime).toBe(false);
    expect(forcedDay.sublabel).toBeNull();
    const forcedNight = (
      await post({ coordinates, departure_time: '2026-06-21T13:00', nighttime: true })
    ).json();
    expect(forcedNight.metadata.nighttime).toBe(true);
  });

  it('answers walking routes without cycling fields', async () => {
    const res = await post({
      coordinates: [WHITEHALL_NORTH, [-74.0089, 40.70797]],
      profile: 'walking',
      bearing: 10,
    });
    const body = res.json();
    expect(body.graph_version).toBeNull();
    expect(body.metadata).toEqual({ profile: 'walking', waypoint_count: 2 });
    for (const s of body.route.steps) {
      expect(s.mode).toBe('walking');
      expect(s.safety_classification).toBeUndefined();
      expect(s.lit).toBeUndefined();
    }
    expect(body.route.duration).toBeCloseTo(body.route.distance / (5 / 3.6), -1);
  });

  it('validates the body, naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ coordinates: [[-74, 40.7]] }, /^coordinates: /],
      [
        {
          coordinates: [
            [-74, 40.7],
            [-200, 40.7],
          ],
        },
        /^coordinates\.1\.0: /,
      ],
      [
        {
          coordinates: [
            [-74, 40.7],
            [-74, 40.71],
          ],
          bearing: 360,
        },
        /^bearing: /,
      ],
      [
        {
          coordinates: [
            [-74, 40.7],
            [-74, 40.71],
          ],
          profile: 'driving',
        },
        /^profile: /,
      ],
      [
        {
          coordinates: [
            [-74, 40.7],
            [-74, 40.71],
          ],
          departure_time: '2026-13-01T10:00',
        },
        /^departure_time/,
      ],
      [
        {
          coordinates: [
            [-74, 40.7],
            [-74, 40.71],
          ],
          departure_time: 'tomorrow',
        },
        /^departure_time/,
      ],
      [{ coordinates: Array.from({ length: 26 }, () => [-74, 40.7]) }, /^coordinates: /],
    ];
    for (const [payload, error] of cases) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toMatch(error);
    }
  });

  it('refuses routes across cities or outside coverage, and answers 503 for a city without a graph', async () => {
    const cross = await post({
      coordinates: [
        [-74.0089, 40.70797],
        [-0.0972, 51.5196],
      ],
    });
    expect(cross.statusCode).toBe(400);
    expect(cross.json().code).toBe('CROSS_CITY_ROUTE');
    expect(cross.json().error).toContain('New York City');
    expect(cross.json().error).toContain('London');
    const outside = await post({
      coordinates: [
        [2.35, 48.85],
        [2.36, 48.86],
      ],
    });
    expect(outside.statusCode).toBe(400);
    expect(outside.json().code).toBe('CROSS_CITY_ROUTE');
    // The borough boundary is clipped to the shoreline: a pier on the Hudson River Greenway lies
    // just outside it and is still routed; Jersey City, across the river, is not New York.
    const pier = await post({
      coordinates: [
        [-74.0159, 40.7214],
        [-74.0089, 40.70797],
      ],
    });
    expect(pier.statusCode, pier.body).toBe(200);
    const jersey = await post({
      coordinates: [
        [-74.045, 40.72],
        [-74.0089, 40.70797],
      ],
    });
    expect(jersey.statusCode).toBe(400);
    expect(jersey.json().code).toBe('CROSS_CITY_ROUTE');
    // Chicago is a configured city, but no Chicago graph is loaded here.
    const chicago = await post({
      coordinates: [
        [-87.63, 41.88],
        [-87.62, 41.89],
      ],
    });
    expect(chicago.statusCode).toBe(503);
  });

  it('answers 200 with a null route when there is no route', async () => {
    // Inside New York City coverage but far from the loaded extract: nothing to snap to.
    const res = await post({
      coordinates: [
        [-73.95, 40.65],
        [-73.94, 40.66],
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().route).toBeNull();
  });

  it('requires credentials', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/directions/v2/',
      payload: {
        coordinates: [
          [-74, 40.7],
          [-74, 40.71],
        ],
      },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Authentication credentials were not provided.' });
  });

  it('lists disruptions active or starting within the hour near the route, never on walking', async () => {
    const coordinates = [WHITEHALL_SOUTH, WHITEHALL_NORTH];
    const base = { source: 'curator', city: 'nyc', notes: 'Lane closed', severity: 'avoid' as const };
    const onRoute: [number, number] = [-74.01296, 40.70285];
    app.repos.disruptions.create({
      ...base,
      name: 'Whitehall Street',
      location: onRoute,
      startDate: '2026-11-23',
      startMinute: 600,
      endDate: '2026-11-25',
      endMinute: 1440,
    });
    app.repos.disruptions.create({
      ...base,
      name: 'Whitehall Street',
      location: onRoute,
      startDate: '2026-11-23',
      startMinute: 750,
      endDate: '2026-11-23',
      endMinute: 900,
    });
    app.repos.disruptions.create({
      ...base,
      name: 'Far away',
      location: [-74.0, 40.715],
      startDate: '2026-11-20',
      startMinute: 0,
      endDate: '2026-11-30',
      endMinute: 1440,
    });
    const at = async (departure_time: string, profile = 'cycling') =>
      (await post({ coordinates, departure_time, profile })).json().disruptions;
    const noon = await at('2026-11-23T12:00');
    expect(noon.map((d: { status: string }) => d.status)).toEqual(['active', 'upcoming']);
    expect(noon[0]).toMatchObject({
      id: expect.stringMatching(/^curator:\d+$/),
      source: 'curator',
      severity: 'avoid',
      location: onRoute,
      start_date: '2026-11-23',
      start_minute: 600,
      end_minute: 1440,
    });
    expect(await at('2026-11-23T08:30')).toBeUndefined();
    expect(await at('2026-11-23T12:00', 'walking')).toBeUndefined();
  });

  it('routes around an avoidance window at the departure time, and only then', async () => {
    const city = app.engine.city('nyc');
    if (!city) throw new Error('no nyc');
    const coordinates = [WHITEHALL_SOUTH, WHITEHALL_NORTH];
    const arcs = city.engine.arcsOfWay(5672006);
    // Tuesdays 08:00–10:00 (weekday bit 1 = Tuesday).
    city.engine.addAvoidance({
      id: 'works',
      arcs,
      severity: 'closed',
      schedule: { kind: 'weekly', weekdays: 0b10, startMinute: 480, endMinute: 600 },
    });
    const inside = (await post({ coordinates, departure_time: '2026-11-24T09:00' })).json().route;
    const outside = (await post({ coordinates, departure_time: '2026-11-24T11:00' })).json().route;
    city.engine.removeAvoidance('works');
    expect(outside.distance).toBeLessThan(60);
    // Inside the window the street is closed: no route, or one that never rides Whitehall Street
    // (the path beside it, reached over the walked crossings, or a way round).
    const names = (r: { steps: { name: string }[] }) => r.steps.map((s) => s.name);
    expect(names(outside)).toContain('Whitehall Street');
    expect(inside === null || !names(inside).includes('Whitehall Street')).toBe(true);
  });
});

describe('POST /directions/ (v1)', () => {
  it('answers the Mapbox v5 shape to legacy keys', async () => {
    const res = await post(
      {
        coordinates: [
          [-74.0089, 40.70797],
          [-74.00863, 40.71196],
        ],
        options: { geometries: 'polyline' },
      },
      '/directions/',
      legacyKey,
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBeDefined();
    const body = res.json();
    expect(body.code).toBe('Ok');
    expect(body.metadata).toMatchObject({
      routing_engine: 'network_router',
      profile: 'cycling',
      waypoint_count: 2,
      nighttime: expect.any(Boolean),
    });
    expect(typeof body.search_id).toBe('number');
    expect(body.edge_ids.every((x: unknown) => Number.isInteger(x))).toBe(true);
    expect(body.graph_version).toMatch(/^[0-9a-f]{16}$/);
    const route = body.routes[0];
    const line = decodePolyline(route.geometry);
    expect(line.length).toBeGreaterThan(2);
    expect(line[0]?.[0]).toBeCloseTo(-74.0089, 2);
    const step = route.legs[0].steps[0];
    expect(step.maneuver.type).toBe('depart');
    expect(step.voiceInstructions[0]).toEqual({
      distanceAlongGeometry: expect.any(Number),
      announcement: expect.any(String),
    });
    expect(step.bannerInstructions[0].distanceAlongGeometry).toBeCloseTo(step.distance, 1);
    expect(route.legs[0].steps.at(-1).maneuver.type).toBe('arrive');
  });

  it('honours overview, steps and alternatives, and refuses driving', async () => {
    const coordinates = [
      [-74.0089, 40.70797],
      [-74.00863, 40.71196],
    ];
    const bare = (
      await post({ coordinates, options: { overview: false, steps: false } }, '/directions/', legacyKey)
    ).json();
    expect(bare.routes[0].geometry).toBeUndefined();
    expect(bare.routes[0].legs[0].steps).toEqual([]);
    // Direct and SuperSafe differ from Farringdon to the Museum of London (SuperSafe keeps off the
    // busy roads): the alternative is the SuperSafe route.
    const rotunda = {
      coordinates: [
        [-0.109, 51.523],
        [-0.0935, 51.5171],
      ],
      departure_time: '2026-11-23T12:00',
    };
    const alt = (
      await post({ ...rotunda, supersafe: false, options: { alternatives: true } }, '/directions/', legacyKey)
    ).json();
    expect(alt.routes).toHaveLength(2);
    expect(alt.routes[1].distance).toBeGreaterThan(alt.routes[0].distance);
    const noAlt = (
      await post({ ...rotunda, supersafe: true, options: { alternatives: true } }, '/directions/', legacyKey)
    ).json();
    expect(noAlt.routes).toHaveLength(1);
    const driving = await post({ coordinates, profile: 'driving' }, '/directions/', legacyKey);
    expect(driving.statusCode).toBe(400);
    expect(driving.json()).toEqual({ error: 'Profile no longer supported' });
    const none = (
      await post(
        {
          coordinates: [
            [-73.95, 40.65],
            [-73.94, 40.66],
          ],
        },
        '/directions/',
        legacyKey,
      )
    ).json();
    expect(none.code).toBe('NoRoute');
    expect(none.routes).toEqual([]);
  });
});
