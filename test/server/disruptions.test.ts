// Disruptions feeding routing on the real Lower Manhattan extract: curated entries through the admin
// API, and the WZDx importer reading a feed served from 127.0.0.1 (a malformed feed is rejected
// with a logged reason and the previous import stays in force).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { distanceToLine } from '../../server/src/routing/directions.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

let app: FastifyInstance;
let feedServer: http.Server;
let feedBody = '{}';
let admin: string;
let appKey: string;
const logs: string[] = [];

const FROM: [number, number] = [-74.0089, 40.70797];
const TO: [number, number] = [-74.00863, 40.71196];
const directions = async (departure_time?: string) =>
  (
    await app.inject({
      method: 'POST',
      url: '/directions/v2/',
      headers: { apikey: appKey },
      payload: { coordinates: [FROM, TO], ...(departure_time ? { departure_time } : {}) },
    })
  ).json();
const adminCall = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${admin}` }, ...(payload ? { payload } : {}) });

/** A middle stretch of the usual route: its street, shape and a point in it. */
let street: { name: string; coords: [number, number][]; point: [number, number] };

beforeAll(async () => {
  feedServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/geo+json' });
    res.end(feedBody);
  });
  await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', r));
  const port = (feedServer.address() as AddressInfo).port;
  const config = testConfig({
    QUIETWAY_WZDX_URL: `http://127.0.0.1:${port}/wzdx.geojson`,
    QUIETWAY_WZDX_INTERVAL_SECONDS: '3600',
  });
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir, 25);
  app = await buildApp({
    config,
    logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
  });
  await app.ready();
  appKey = issueKey(app.repos, { kind: 'app', name: 'a', source: null, legacyV1: false }).key;
  await app.inject({
    method: 'POST',
    url: '/auth/v1/signup',
    payload: { email: 'admin@example.org', password: 'long enough pw', name: 'Ada' },
  });
  app.repos.users.setRole('admin@example.org', 'admin');
  admin = (
    await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      payload: { email: 'admin@example.org', password: 'long enough pw' },
    })
  ).json().access_token;
  const route = (await directions()).route;
  const steps = route.steps.filter((s: { name: string; distance: number }) => s.name && s.distance > 40);
  const step = steps[Math.floor(steps.length / 2)];
  const coords = step.geometry.coordinates as [number, number][];
  let best = 0;
  for (let i = 1; i + 1 < coords.length; i++) {
    const d = (c: number) =>
      Math.hypot(
        (coords[c + 1]?.[0] ?? 0) - (coords[c]?.[0] ?? 0),
        (coords[c + 1]?.[1] ?? 0) - (coords[c]?.[1] ?? 0),
      );
    if (d(i) > d(best)) best = i;
  }
  const [a, b] = [coords[best] as [number, number], coords[best + 1] as [number, number]];
  street = { name: step.name, coords, point: [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] };
}, 180_000);
afterAll(async () => {
  await app?.close();
  feedServer?.close();
});

const nyc = (dt: DateTime) => dt.setZone('America/New_York');

function feature(id: string, coords: [number, number][], start: DateTime, end: DateTime, extra: object = {}) {
  return {
    type: 'Feature',
    id,
    geometry: { type: 'LineString', coordinates: coords },
    properties: {
      core_details: {
        event_type: 'work-zone',
        data_source_id: 'nyc-dot',
        road_names: [street.name],
        direction: 'northbound',
        description: 'Water main replacement',
      },
      start_date: start.toISO(),
      end_date: end.toISO(),
      vehicle_impact: 'all-lanes-closed',
      lanes: [
        { order: 1, type: 'general', status: 'closed' },
        { order: 2, type: 'bike-lane', status: 'closed' },
      ],
      ...extra,
    },
  };
}

const feedOf = (...features: object[]) =>
  JSON.stringify({
    type: 'FeatureCollection',
    feed_info: {
      update_date: new Date().toISOString(),
      version: '4.2',
      data_sources: [{ data_source_id: 'nyc-dot' }],
    },
    features,
  });

describe('curated disruptions', () => {
  it('an active closure becomes an avoidance on the way nearest its pin; an upcoming one changes no route; ending it restores routing', async () => {
    const now = nyc(DateTime.now());
    const later = now.plus({ hours: 3 });
    const upcoming = await adminCall('POST', '/api/admin/disruptions/', {
      name: street.name,
      notes: 'Crane',
      severity: 'closed',
      location: street.point,
      start_date: later.toISODate(),
      start_minute: later.hour * 60 + later.minute,
      end_date: later.plus({ days: 1 }).toISODate(),
      end_minute: 600,
    });
    expect(upcoming.statusCode).toBe(201);
    expect(upcoming.json()).toMatchObject({
      id: expect.stringMatching(/^curator:\d+$/),
      way_ids: [expect.any(Number)],
      status: 'upcoming',
    });
    expect(distanceToLine(street.point, (await directions()).route.geometry.coordinates)).toBeLessThan(1);

    const started = now.minus({ hours: 1 });
    const active = await adminCall('POST', '/api/admin/disruptions/', {
      name: street.name,
      notes: 'Crane',
      severity: 'closed',
      location: street.point,
      start_date: started.toISODate(),
      start_minute: started.hour * 60 + started.minute,
      end_date: now.plus({ days: 2 }).toISODate(),
      end_minute: 1440,
    });
    const id = active.json().id;
    const during = await directions();
    expect(distanceToLine(street.point, during.route.geometry.coordinates)).toBeGreaterThan(5);
    expect(during.disruptions.map((d: { id: string }) => d.id)).toContain(id);

    expect(active.json().status).toBe('active');
    // An update keeps the id; moved to tomorrow it no longer changes today's route.
    const tomorrow = now.plus({ days: 1 });
    const moved = await adminCall('PUT', `/api/admin/disruptions/${id}/`, {
      name: street.name,
      notes: 'Crane, moved',
      severity: 'closed',
      location: street.point,
      start_date: tomorrow.toISODate(),
      start_minute: 600,
      end_date: tomorrow.toISODate(),
      end_minute: 1440,
    });
    expect(moved.json()).toMatchObject({ id, notes: 'Crane, moved', status: 'upcoming' });
    expect(distanceToLine(street.point, (await directions()).route.geometry.coordinates)).toBeLessThan(1);
    await adminCall('PUT', `/api/admin/disruptions/${id}/`, {
      name: street.name,
      notes: 'Crane',
      severity: 'closed',
      location: street.point,
      start_date: started.toISODate(),
      start_minute: started.hour * 60 + started.minute,
      end_date: now.plus({ days: 2 }).toISODate(),
      end_minute: 1440,
    });
    expect(distanceToLine(street.point, (await directions()).route.geometry.coordinates)).toBeGreaterThan(5);
    const ended = await adminCall('POST', `/api/admin/disruptions/${id}/end/`);
    expect(ended.statusCode).toBe(200);
    expect(ended.json().status).toBe('ended');
    const after = await directions();
    expect(distanceToLine(street.point, after.route.geometry.coordinates)).toBeLessThan(1);
    await adminCall('POST', `/api/admin/disruptions/${upcoming.json().id}/end/`);
  });

  it('rejects bad entries with 400', async () => {
    const bad = await adminCall('POST', '/api/admin/disruptions/', {
      severity: 'closed',
      location: [2.35, 48.85],
      start_date: '2026-01-01',
      start_minute: 0,
      end_date: '2026-01-02',
      end_minute: 0,
    });
    expect(bad.json()).toEqual({ error: 'location lies outside every routed city' });
    const backwards = await adminCall('POST', '/api/admin/disruptions/', {
      severity: 'closed',
      location: street.point,
      start_date: '2026-01-02',
      start_minute: 0,
      end_date: '2026-01-01',
      end_minute: 0,
    });
    expect(backwards.statusCode).toBe(400);
  });
});

describe('WZDx importer', () => {
  it('imports a feed from 127.0.0.1; a malformed feed is rejected with a logged reason and the previous import stays', async () => {
    const now = DateTime.now();
    const [a, b] = [street.coords[0] as [number, number], street.coords.at(-1) as [number, number]];
    feedBody = feedOf(
      // One works site in two features (both directions of the same road).
      feature('nyc-dot-101', street.coords, now.minus({ hours: 2 }), now.plus({ days: 3 })),
      feature('nyc-dot-102', [b, a], now.minus({ hours: 2 }), now.plus({ days: 3 })),
      // Upcoming: listed by the admin API, never changes routing.
      feature(
        'nyc-dot-200',
        [
          [-74.0131, 40.7049],
          [-74.0128, 40.7053],
        ],
        now.plus({ days: 5 }),
        now.plus({ days: 6 }),
      ),
      // Lanes open: nothing for riders.
      feature('nyc-dot-300', street.coords, now.minus({ hours: 1 }), now.plus({ days: 1 }), {
        vehicle_impact: 'all-lanes-open',
        lanes: [{ order: 1, type: 'general', status: 'open' }],
      }),
    );
    const run = await adminCall('POST', '/api/admin/disruptions/import/');
    expect(run.json(), JSON.stringify(run.json())).toMatchObject({ ok: true });
    const list = (await adminCall('GET', '/api/admin/disruptions/?city=nyc'))
      .json()
      .disruptions.filter((d: { source: string }) => d.source === 'wzdx');
    expect(list).toHaveLength(2);
    const site = list.find((d: { external_id: string }) => d.external_id === 'nyc-dot-101,nyc-dot-102');
    expect(site).toMatchObject({
      id: expect.stringMatching(/^wzdx:\d+$/),
      severity: 'closed',
      name: street.name,
    });
    expect(site.way_ids.length).toBeGreaterThan(0);
    expect(distanceToLine(site.location, street.coords)).toBeLessThan(30);

    const during = await directions();
    expect(distanceToLine(street.point, during.route.geometry.coordinates)).toBeGreaterThan(5);
    expect(during.disruptions.map((d: { id: string }) => d.id)).toEqual([site.id]);

    // Re-importing the same feed keeps the ids.
    expect((await adminCall('POST', '/api/admin/disruptions/import/')).json().ok).toBe(true);
    const again = (await adminCall('GET', '/api/admin/disruptions/?city=nyc')).json().disruptions;
    expect(again.map((d: { id: string }) => d.id)).toContain(site.id);

    for (const [body, reason] of [
      ['not json', /not JSON/],
      [
        JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: {} }] }),
        /feature 0/,
      ],
      [
        feedOf({ ...feature('x', street.coords, now, now.plus({ days: 1 })), id: undefined }),
        /feature 0: id/,
      ],
    ] as [string, RegExp][]) {
      feedBody = body;
      logs.length = 0;
      const rejected = (await adminCall('POST', '/api/admin/disruptions/import/')).json();
      expect(rejected.ok).toBe(false);
      expect(rejected.message).toMatch(reason);
      expect(logs.some((l) => /WZDx feed rejected, previous import stays in force/.test(l))).toBe(true);
      const still = await directions();
      expect(still.disruptions.map((d: { id: string }) => d.id)).toEqual([site.id]);
      expect(distanceToLine(street.point, still.route.geometry.coordinates)).toBeGreaterThan(5);
    }

    // An empty (valid) feed ends them: routing returns to the graph's own data.
    feedBody = feedOf();
    expect((await adminCall('POST', '/api/admin/disruptions/import/')).json().ok).toBe(true);
    const cleared = await directions();
    expect(cleared.disruptions).toBeUndefined();
    expect(distanceToLine(street.point, cleared.route.geometry.coordinates)).toBeLessThan(1);
  });
});
