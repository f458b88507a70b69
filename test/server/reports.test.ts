// Road reports end to end on the real Lower Manhattan extract: validation and visibility of
// POST/GET /reports/, the analysis worker, admin review, accepted changes in routing (and after a
// restart), disruptions and the safety map.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import type { Config } from '../../server/src/config.js';
import { distanceToLine } from '../../server/src/routing/directions.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

let config: Config;
let app: FastifyInstance;
const tokens: Record<string, string> = {};
let partnerKey: string;
let otherPartnerKey: string;
let appKey: string;

async function signUp(email: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/signup',
    payload: { email, password: 'long enough pw', name: email.split('@')[0] },
  });
  expect(res.statusCode).toBe(201);
  return res.json().access_token as string;
}

async function signIn(email: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    payload: { email, password: 'long enough pw' },
  });
  return res.json().access_token as string;
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const file = (payload: object, t = tokens.rider as string) =>
  app.inject({ method: 'POST', url: '/reports/', headers: bearer(t), payload });
const read = (id: number, t = tokens.rider as string) =>
  app.inject({ method: 'GET', url: `/reports/${id}/`, headers: bearer(t) });
const adminCall = (method: 'GET' | 'POST' | 'DELETE' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: bearer(tokens.admin as string), ...(payload ? { payload } : {}) });

/** Polls a report until the analysis has written its summary. */
async function analysed(id: number, t = tokens.rider as string, limitMs = 10_000) {
  const started = Date.now();
  for (;;) {
    const r = (await read(id, t)).json();
    if (r.summary !== null) return { ...r, ms: Date.now() - started };
    if (Date.now() - started > limitMs) throw new Error(`report ${id} not analysed within ${limitMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

// A short trip in the Financial District; its middle street is what the rider reports closed.
const FROM: [number, number] = [-74.0089, 40.70797];
const TO: [number, number] = [-74.00863, 40.71196];
const directions = () =>
  app.inject({
    method: 'POST',
    url: '/directions/v2/',
    headers: { apikey: appKey },
    payload: { coordinates: [FROM, TO] },
  });

/** Away from junctions, where another way of the same street may begin. */
function midpointOfLongestSegment(coords: [number, number][]): [number, number] {
  let best: [number, number] = coords[0] as [number, number];
  let len = -1;
  for (let i = 0; i + 1 < coords.length; i++) {
    const [a, b] = [coords[i] as [number, number], coords[i + 1] as [number, number]];
    const d = Math.hypot(b[0] - a[0], b[1] - a[1]);
    if (d > len) {
      len = d;
      best = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
    }
  }
  return best;
}

beforeAll(async () => {
  config = testConfig({ QUIETWAY_REPORT_ANALYSIS_MS: '200' });
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir, 25);
  app = await buildApp({ config });
  await app.ready();
  tokens.rider = await signUp('rider@example.org');
  tokens.other = await signUp('other@example.org');
  await signUp('admin@example.org');
  app.repos.users.setRole('admin@example.org', 'admin');
  tokens.admin = await signIn('admin@example.org');
  partnerKey = issueKey(app.repos, { kind: 'partner', name: 'p', source: 'citylab', legacyV1: false }).key;
  otherPartnerKey = issueKey(app.repos, {
    kind: 'partner',
    name: 'q',
    source: 'other_org',
    legacyV1: false,
  }).key;
  appKey = issueKey(app.repos, { kind: 'app', name: 'a', source: null, legacyV1: false }).key;
}, 180_000);
afterAll(() => app?.close());

describe('POST /reports/', () => {
  const valid = {
    issue_type: 'road_unsafe',
    location: [-74.0105, 40.7075],
    issue_subtype: 'too_many_vehicles',
  };

  it('answers 201 {id, status: received, created_at} and attributes the report to the rider', async () => {
    const res = await file(valid);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(Number), status: 'received', created_at: expect.any(String) });
    const stored = app.repos.reports.byId(body.id);
    expect(stored?.userId).toBe(app.repos.users.byEmail('rider@example.org')?.id);
    expect(stored?.via).toBe('user');
  });

  it('validates exactly per the spec', async () => {
    const bad = async (payload: object, t?: string) => {
      const res = await file(payload, t);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      return res.json().error as string;
    };
    expect(await bad({ ...valid, issue_type: 'pothole' })).toMatch(/issue_type/);
    expect(await bad({ ...valid, location: [-200, 40] })).toMatch(/location/);
    expect(await bad({ ...valid, location: [-74, 91] })).toMatch(/location/);
    expect(await bad({ ...valid, location: 'here' })).toMatch(/location/);
    expect(await bad({ ...valid, description: 'x'.repeat(2001) })).toMatch(/description/);
    expect(await bad({ ...valid, road_name: 'x'.repeat(201) })).toMatch(/road_name/);
    expect(await bad({ ...valid, issue_subtype: 'x'.repeat(65) })).toMatch(/issue_subtype/);
    expect(await bad({ ...valid, route: { type: 'LineString', coordinates: [[0, 0]] } })).toMatch(/route/);
    // Limits are inclusive; an unclassified subtype is stored as sent.
    const ok = await file({
      ...valid,
      description: 'd'.repeat(2000),
      road_name: 'r'.repeat(200),
      issue_subtype: 's'.repeat(64),
    });
    expect(ok.statusCode).toBe(201);
    expect(app.repos.reports.byId(ok.json().id)?.issueSubtype).toBe('s'.repeat(64));
    // `other` under every category.
    for (const issue_type of ['road_closed', 'bad_routing', 'unpleasant', 'other']) {
      expect((await file({ ...valid, issue_type, issue_subtype: 'other' })).statusCode).toBe(201);
    }
    // Coordinates anywhere are accepted (stored only outside a routed city).
    expect((await file({ ...valid, location: [2.35, 48.85] })).statusCode).toBe(201);
  });

  it('requires a valid source from partner keys, ignores it from riders', async () => {
    const p = (payload: object, key = partnerKey) =>
      app.inject({ method: 'POST', url: '/reports/', headers: { apikey: key }, payload });
    expect((await p(valid)).json()).toEqual({ error: 'source is required for partner API keys' });
    expect((await p({ ...valid, source: 'A' })).statusCode).toBe(400);
    expect((await p({ ...valid, source: 'x'.repeat(33) })).statusCode).toBe(400);
    expect((await p({ ...valid, source: 'other_org' })).statusCode).toBe(400);
    const ok = await p({ ...valid, source: 'citylab' });
    expect(ok.statusCode).toBe(201);
    expect(app.repos.reports.byId(ok.json().id)).toMatchObject({ via: 'partner', source: 'citylab' });
    const rider = await file({ ...valid, source: 'ignored-here' });
    expect(rider.statusCode).toBe(201);
    expect(app.repos.reports.byId(rider.json().id)?.source).toBeNull();
  });

  it('refuses anonymous callers and app keys, and other methods with Allow', async () => {
    const anon = await app.inject({ method: 'POST', url: '/reports/', payload: valid });
    expect(anon.statusCode).toBe(401);
    const appOnly = await app.inject({
      method: 'POST',
      url: '/reports/',
      headers: { apikey: appKey },
      payload: valid,
    });
    expect(appOnly.statusCode).toBe(401);
    const get = await app.inject({
      method: 'GET',
      url: '/reports/',
      headers: bearer(tokens.rider as string),
    });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const put = await app.inject({
      method: 'PUT',
      url: '/reports/1/',
      headers: bearer(tokens.rider as string),
    });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toMatch(/^GET\b/);
  });

  it('limits a rider to 60 submissions an hour (429 with Retry-After and retry_after_seconds)', async () => {
    const t = await signUp('busy@example.org');
    for (let i = 0; i < 60; i++) expect((await file(valid, t)).statusCode).toBe(201);
    const res = await file(valid, t);
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.json()).toMatchObject({
      error: 'Rate limit exceeded',
      retry_after_seconds: expect.any(Number),
    });
  });
});

describe('GET /reports/{id}/', () => {
  it('shows riders their own reports and partners the API reports; anything else 404', async () => {
    const mine = (await file({ issue_type: 'other', location: [-74.0105, 40.7075] })).json().id;
    const partner = (
      await app.inject({
        method: 'POST',
        url: '/reports/',
        headers: { apikey: partnerKey },
        payload: { issue_type: 'other', location: [-74.0105, 40.7075], source: 'citylab' },
      })
    ).json().id;
    const r = await read(mine);
    expect(r.statusCode).toBe(200);
    expect(Object.keys(r.json()).sort()).toEqual([
      'created_at',
      'id',
      'issue_type',
      'status',
      'summary',
      'updated_at',
    ]);
    expect((await read(mine, tokens.other)).json()).toEqual({ error: 'Report not found' });
    expect((await read(partner)).statusCode).toBe(404);
    const asPartner = (id: number) =>
      app.inject({ method: 'GET', url: `/reports/${id}/`, headers: { apikey: otherPartnerKey } });
    expect((await asPartner(partner)).statusCode).toBe(200);
    expect((await asPartner(mine)).statusCode).toBe(404);
    expect((await read(99_999_999)).statusCode).toBe(404);
    expect(
      (await app.inject({ method: 'GET', url: '/reports/abc/', headers: bearer(tokens.rider as string) }))
        .statusCode,
    ).toBe(404);
  });
});

describe('analysis', () => {
  it('closes a report outside every routed city, and one far from any road, with the reason', async () => {
    const paris = (await file({ issue_type: 'road_closed', location: [2.35, 48.85] })).json().id;
    const r = await analysed(paris);
    expect(r.status).toBe('closed');
    expect(r.summary).toMatch(/outside every routed city/);
    // The middle of the Hudson, inside New York City's boundary.
    const river = (await file({ issue_type: 'road_closed', location: [-74.0235, 40.7105] })).json().id;
    const q = await analysed(river);
    expect(q.status).toBe('closed');
    expect(q.summary).toMatch(/not reproducible|outside/);
  });

  it('reads subtypes and free text into concrete proposals within seconds', async () => {
    const at: [number, number] = [-74.0105, 40.7075];
    const cases: [object, string | null][] = [
      [{ issue_type: 'road_closed', issue_subtype: 'barrier_gate' }, 'close_way'],
      [{ issue_type: 'unpleasant', issue_subtype: 'cobbles_rough' }, 'reweight_way'],
      [{ issue_type: 'other', description: 'Street is closed for construction all week' }, 'window'],
      [{ issue_type: 'road_closed', issue_subtype: 'road_missing' }, null],
      [{ issue_type: 'unclear_instructions', issue_subtype: 'missing_instruction' }, null],
    ];
    for (const [payload, kind] of cases) {
      // Each at its own spot, so none is a duplicate of another.
      const id = (await file({ ...payload, location: at })).json().id;
      const r = await analysed(id);
      expect(r.ms).toBeLessThan(10_000);
      const detail = (await adminCall('GET', `/api/admin/reports/${id}/`)).json();
      if (detail.status === 'closed') {
        expect(detail.summary).toMatch(/duplicate|already/);
        continue;
      }
      expect(detail.status).toBe('in_review');
      expect(detail.proposal?.kind ?? null).toBe(kind);
      expect(detail.matched_ways.length).toBeGreaterThan(0);
      // Closed so the next case is not its duplicate.
      await adminCall('POST', `/api/admin/reports/${id}/close/`, { reason: 'no_change' });
    }
  });

  it('marks a second report on the same way as a duplicate', async () => {
    const at: [number, number] = [-74.0115, 40.7065];
    const first = (
      await file({ issue_type: 'road_unsafe', issue_subtype: 'poor_bike_lane', location: at })
    ).json().id;
    expect((await analysed(first)).status).toBe('in_review');
    const second = (
      await file(
        { issue_type: 'road_unsafe', issue_subtype: 'poor_bike_lane', location: [at[0] + 0.0001, at[1]] },
        tokens.other,
      )
    ).json().id;
    const r = await analysed(second, tokens.other);
    expect(r.status).toBe('closed');
    expect(r.summary).toContain(`duplicate of report #${first}`);
    await adminCall('POST', `/api/admin/reports/${first}/close/`, { reason: 'no_change' });
  });
});

describe('review and routing', () => {
  it('end to end: a temporary closure is proposed, accepted, avoided by routing, listed, and survives a restart', async () => {
    const before = await directions();
    expect(before.statusCode).toBe(200);
    const route = before.json().route;
    // The rider reports the street of a middle step closed, at a point along it.
    const steps = route.steps.filter((s: { name: string; distance: number }) => s.name && s.distance > 40);
    const step = steps[Math.floor(steps.length / 2)];
    const point = midpointOfLongestSegment(step.geometry.coordinates);
    expect(distanceToLine(point, route.geometry.coordinates)).toBeLessThan(1);

    const id = (
      await file({
        issue_type: 'road_closed',
        issue_subtype: 'temporary_closure',
        location: point,
        road_name: step.name,
        description: 'Fenced off for works',
      })
    ).json().id;
    const r = await analysed(id);
    expect(r.status).toBe('in_review');
    expect(r.ms).toBeLessThan(10_000);
    const detail = (await adminCall('GET', `/api/admin/reports/${id}/`)).json();
    expect(detail.proposal).toMatchObject({ kind: 'window', severity: 'closed', schedule: { kind: 'once' } });
    expect(detail.matched_ways[0].name).toBe(step.name);

    const accepted = await adminCall('POST', `/api/admin/reports/${id}/accept/`, {});
    expect(accepted.statusCode).toBe(200);
    const disruptionId = accepted.json().change.disruption_id;
    expect(disruptionId).toMatch(/^curator:\d+$/);

    const after = (await directions()).json();
    expect(distanceToLine(point, after.route.geometry.coordinates)).toBeGreaterThan(5);
    expect(after.disruptions.map((d: { id: string }) => d.id)).toContain(disruptionId);
    const mine = (await read(id)).json();
    expect(mine.status).toBe('accepted');
    expect(mine.summary).toMatch(/^Accepted: a temporary avoidance \(closed\)/);
    const history = (await adminCall('GET', `/api/admin/reports/${id}/`)).json().history;
    expect(history.map((h: { action: string }) => h.action)).toEqual(['propose', 'accept']);
    expect(history[1]).toMatchObject({ actor: 'admin@example.org', before: { status: 'in_review' } });

    // A restart re-applies the change from storage.
    await app.close();
    app = await buildApp({ config });
    await app.ready();
    const restarted = (await directions()).json();
    expect(distanceToLine(point, restarted.route.geometry.coordinates)).toBeGreaterThan(5);
    expect(restarted.disruptions.map((d: { id: string }) => d.id)).toContain(disruptionId);

    // Lifting the change gives routing back the graph's own data.
    const change = accepted.json().change.id;
    expect((await adminCall('DELETE', `/api/admin/changes/${change}/`)).json().status).toBe('lifted');
    const lifted = (await directions()).json();
    expect(distanceToLine(point, lifted.route.geometry.coordinates)).toBeLessThan(1);
    expect(lifted.disruptions).toBeUndefined();
  });

  it('applies a permanent closure and a re-weighting live, flags a turn ban whose ways do not meet, and lifts them', async () => {
    const route = (await directions()).json().route;
    const step = route.steps.filter((s: { name: string; distance: number }) => s.name && s.distance > 40)[0];
    const point = midpointOfLongestSegment(step.geometry.coordinates);
    const surroundings = (
      await adminCall('POST', '/api/admin/changes/', {
        city: 'nyc',
        change: { kind: 'forbid_turn', from_way_id: 1, to_way_id: 2 },
      })
    ).json();
    expect(surroundings.flag).toMatch(/matches no turn/);
    const roads = (
      await app.inject({
        method: 'GET',
        url: `/safety-map/nyc/roads/?bbox=${point[0] - 0.0003},${point[1] - 0.0003},${point[0] + 0.0003},${point[1] + 0.0003}`,
      })
    ).json();
    const near = roads.features
      .filter((f: { properties: { name: string } }) => f.properties.name === step.name)
      .map((f: { properties: { way_id: number } }) => f.properties.way_id);
    expect(near.length).toBeGreaterThan(0);
    const closed = (
      await adminCall('POST', '/api/admin/changes/', {
        city: 'nyc',
        change: { kind: 'close_way', way_ids: near },
      })
    ).json();
    expect(closed.flag).toBeNull();
    const after = (await directions()).json();
    expect(distanceToLine(point, after.route.geometry.coordinates)).toBeGreaterThan(5);
    // The safety map shows it.
    const map = (
      await app.inject({
        method: 'GET',
        url: `/safety-map/nyc/roads/?bbox=${point[0] - 0.0003},${point[1] - 0.0003},${point[0] + 0.0003},${point[1] + 0.0003}`,
      })
    ).json();
    expect(
      map.features.find((f: { properties: { way_id: number } }) => f.properties.way_id === near[0]).properties
        .change,
    ).toBe('closed');
    await adminCall('DELETE', `/api/admin/changes/${closed.id}/`);
    const back = (await directions()).json();
    expect(distanceToLine(point, back.route.geometry.coordinates)).toBeLessThan(1);
    await adminCall('DELETE', `/api/admin/changes/${surroundings.id}/`);
  });
});

describe('safety map', () => {
  it('serves GeoJSON by bbox and vector tiles, cacheable, public', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/safety-map/nyc/roads/?bbox=-74.012,40.705,-74.008,40.709',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    const fc = res.json();
    expect(fc.type).toBe('FeatureCollection');
    expect(fc.features.length).toBeGreaterThan(20);
    expect(fc.features[0].properties).toMatchObject({
      way_id: expect.any(Number),
      class: expect.stringMatching(/^(cycleway|quiet|shared|moderate|busy)$/),
      lit: expect.any(Boolean),
    });
    expect((await app.inject({ method: 'GET', url: '/safety-map/nyc/roads/?bbox=1,2,3' })).statusCode).toBe(
      400,
    );
    expect(
      (await app.inject({ method: 'GET', url: '/safety-map/nyc/roads/?bbox=-75,40,-73,41' })).statusCode,
    ).toBe(400);
    expect(
      (await app.inject({ method: 'GET', url: '/safety-map/mars/roads/?bbox=0,0,0.01,0.01' })).statusCode,
    ).toBe(404);
    // z15 tile over the Financial District.
    const tile = await app.inject({ method: 'GET', url: '/safety-map/nyc/tiles/15/9647/12320.pbf' });
    expect(tile.statusCode).toBe(200);
    expect(tile.headers['content-type']).toBe('application/vnd.mapbox-vector-tile');
    expect(tile.rawPayload.length).toBeGreaterThan(1000);
    expect(tile.rawPayload.includes(Buffer.from('roads'))).toBe(true);
    expect((await app.inject({ method: 'GET', url: '/safety-map/nyc/tiles/3/1/1.pbf' })).statusCode).toBe(
      400,
    );
  });
});

describe('more change kinds', () => {
  it('needs a pin for a one-off window made without a report', async () => {
    const res = await adminCall('POST', '/api/admin/changes/', {
      city: 'nyc',
      change: {
        kind: 'window',
        way_ids: [5672006],
        severity: 'avoid',
        schedule: { kind: 'once', start: '2026-12-01T08:00', end: '2026-12-03T18:00' },
      },
    });
    expect(res.json()).toEqual({
      error: 'location is required for a one-off window: it is the pin of its disruption',
    });
  });

  it('flags a change whose way is not in the graph (a rebuild dropped it) and applies it to the rest', async () => {
    const c = (
      await adminCall('POST', '/api/admin/changes/', {
        city: 'nyc',
        change: { kind: 'reweight_way', way_ids: [5672006, 999_999_999_999], factor: 2 },
      })
    ).json();
    expect(c.flag).toMatch(/ways vanished from the graph \(999999999999\): applied to the others/);
    const listed = (await adminCall('GET', '/api/admin/changes/?status=active')).json().changes;
    expect(listed.find((x: { id: number }) => x.id === c.id)?.flag).toBe(c.flag);
    expect((await adminCall('DELETE', `/api/admin/changes/${c.id}/`)).json().status).toBe('lifted');
    expect((await adminCall('DELETE', `/api/admin/changes/${c.id}/`)).statusCode).toBe(409);
  });

  it('applies a city-wide weighting change and lifts it back to the graph’s own model', async () => {
    const city = app.engine.city('nyc');
    if (!city) throw new Error('no graph');
    const own = JSON.parse(city.engine.weighting());
    const c = (
      await adminCall('POST', '/api/admin/changes/', {
        city: 'nyc',
        change: { kind: 'weighting', model: { supersafe: { push_factor: 7 } } },
      })
    ).json();
    expect(c.flag).toBeNull();
    expect(JSON.parse(city.engine.weighting()).supersafe.push_factor).toBe(7);
    await adminCall('DELETE', `/api/admin/changes/${c.id}/`);
    expect(JSON.parse(city.engine.weighting())).toEqual(own);
  });

  it('a weekly window on a street applies to the departures inside it', async () => {
    const route = (await directions()).json().route;
    const step = route.steps.filter((s: { name: string; distance: number }) => s.name && s.distance > 40)[0];
    const point = midpointOfLongestSegment(step.geometry.coordinates);
    const roads = (
      await app.inject({
        method: 'GET',
        url: `/safety-map/nyc/roads/?bbox=${point[0] - 0.0002},${point[1] - 0.0002},${point[0] + 0.0002},${point[1] + 0.0002}`,
      })
    ).json();
    const ways = [
      ...new Set(
        roads.features
          .filter((f: { properties: { name: string } }) => f.properties.name === step.name)
          .map((f: { properties: { way_id: number } }) => f.properties.way_id),
      ),
    ];
    const c = (
      await adminCall('POST', '/api/admin/changes/', {
        city: 'nyc',
        change: {
          kind: 'window',
          way_ids: ways,
          severity: 'closed',
          schedule: { kind: 'weekly', weekdays: ['sun'], start_minute: 1320, end_minute: 120 },
        },
      })
    ).json();
    const at = async (departure_time: string) =>
      (
        await app.inject({
          method: 'POST',
          url: '/directions/v2/',
          headers: { apikey: appKey },
          payload: { coordinates: [FROM, TO], departure_time },
        })
      ).json().route.geometry.coordinates;
    // 2026-11-22 is a Sunday: closed from 22:00 to 02:00 on the Monday.
    expect(distanceToLine(point, await at('2026-11-22T23:30'))).toBeGreaterThan(5);
    expect(distanceToLine(point, await at('2026-11-23T01:30'))).toBeGreaterThan(5);
    expect(distanceToLine(point, await at('2026-11-23T03:00'))).toBeLessThan(1);
    expect(distanceToLine(point, await at('2026-11-22T12:00'))).toBeLessThan(1);
    await adminCall('DELETE', `/api/admin/changes/${c.id}/`);
    expect(distanceToLine(point, await at('2026-11-22T23:30'))).toBeLessThan(1);
  });

  it('checks bad_routing reports against the route the rider saw', async () => {
    const seen = (await directions()).json().route.geometry;
    const mid = seen.coordinates[Math.floor(seen.coordinates.length / 2)];
    const same = (
      await file({ issue_type: 'bad_routing', issue_subtype: 'quieter_route', location: mid, route: seen })
    ).json().id;
    const r = await analysed(same);
    const detail = (await adminCall('GET', `/api/admin/reports/${same}/`)).json();
    expect(detail.analysis.route_check).toMatchObject({ same_as_seen: true, passes_location: true });
    expect(r.status).toBe('in_review');
    expect(detail.proposal.kind).toBe('reweight_way');
    await adminCall('POST', `/api/admin/reports/${same}/close/`, { reason: 'no_change' });
    // A route that today's routing no longer takes (a detour east of the trip).
    const old = { type: 'LineString', coordinates: [FROM, [-74.0045, 40.7095], TO] };
    const moved = (
      await file(
        {
          issue_type: 'bad_routing',
          issue_subtype: 'faster_route',
          location: [-74.0045, 40.7095],
          route: old,
        },
        tokens.other,
      )
    ).json().id;
    const m = await analysed(moved, tokens.other);
    expect(m.status).toBe('closed');
    expect(m.summary).toMatch(/not reproducible|already fixed/);
  });
});

describe('review decisions', () => {
  it('accepts with an edited change, refuses a second decision, and records both sides of each', async () => {
    const steps = (await directions())
      .json()
      .route.steps.filter((st: { name: string; distance: number }) => st.name && st.distance > 40);
    const at = midpointOfLongestSegment(steps.at(-1).geometry.coordinates);
    const id = (
      await file({ issue_type: 'road_closed', issue_subtype: 'permanent_closure', location: at })
    ).json().id;
    const r = await analysed(id);
    expect(r.status, r.summary).toBe('in_review');
    const proposal = (await adminCall('GET', `/api/admin/reports/${id}/`)).json().proposal;
    expect(proposal).toMatchObject({ kind: 'close_way', direction: 'both' });
    const edited = { ...proposal, direction: 'forward' };
    const res = await adminCall('POST', `/api/admin/reports/${id}/accept/`, {
      change: edited,
      summary: 'Accepted: closed northbound only',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().change.change).toEqual(edited);
    expect((await read(id)).json()).toMatchObject({
      status: 'accepted',
      summary: 'Accepted: closed northbound only',
    });
    expect(
      (await adminCall('POST', `/api/admin/reports/${id}/close/`, { reason: 'no_change' })).statusCode,
    ).toBe(409);
    const bad = await adminCall('POST', `/api/admin/reports/${id}/accept/`, {
      change: { kind: 'close_way', way_ids: [] },
    });
    expect(bad.statusCode).toBe(400);
    const last = (await adminCall('GET', `/api/admin/reports/${id}/`)).json().history.at(-1);
    expect(last).toMatchObject({
      actor: 'admin@example.org',
      action: 'accept',
      before: { status: 'in_review', proposal },
      after: { status: 'accepted', change: edited },
      at: expect.any(String),
    });
    await adminCall('DELETE', `/api/admin/changes/${res.json().change.id}/`);
    // The queue filters by status and issue type; riders and keys are refused.
    const queue = (
      await adminCall('GET', '/api/admin/reports/?status=accepted&issue_type=road_closed')
    ).json();
    expect(queue.reports.map((r: { id: number }) => r.id)).toContain(id);
    expect(queue.reports.every((r: { status: string }) => r.status === 'accepted')).toBe(true);
    const rider = await app.inject({
      method: 'GET',
      url: '/api/admin/reports/',
      headers: bearer(tokens.rider as string),
    });
    expect(rider.statusCode).toBe(403);
  });
});

describe('turn bans', () => {
  it('reads a reported illegal turn off the seen route, and accepting it bans the turn in routing until lifted', async () => {
    const route = (await directions()).json().route;
    const turn = route.steps.find(
      (st: { maneuver: { instruction: string } }, i: number) =>
        i > 0 && /^Turn/.test(st.maneuver.instruction),
    );
    expect(turn).toBeDefined();
    const id = (
      await file({
        issue_type: 'bad_routing',
        issue_subtype: 'other',
        description: 'No left turn here, but the route told me to turn',
        location: turn.maneuver.location,
        route: route.geometry,
      })
    ).json().id;
    expect((await analysed(id)).status).toBe('in_review');
    const detail = (await adminCall('GET', `/api/admin/reports/${id}/`)).json();
    expect(detail.reading).toBe('turn_ban');
    expect(detail.proposal).toMatchObject({
      kind: 'forbid_turn',
      from_way_id: expect.any(Number),
      to_way_id: expect.any(Number),
    });
    expect(detail.proposal.from_way_id).not.toBe(detail.proposal.to_way_id);
    const accepted = (await adminCall('POST', `/api/admin/reports/${id}/accept/`, {})).json();
    expect(accepted.change.flag ?? null).toBeNull();
    expect(accepted.report.summary).toMatch(/^Accepted: forbidding the turn from way \d+ to way \d+/);
    // The same request no longer makes the banned turn; lifting the ban restores the route.
    const banned = (await directions()).json().route;
    expect(banned.geometry).not.toEqual(route.geometry);
    await adminCall('DELETE', `/api/admin/changes/${accepted.change.id}/`);
    expect((await directions()).json().route.geometry).toEqual(route.geometry);
  });
});

describe('OpenAPI', () => {
  it('documents the report, admin and safety-map routes', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    for (const p of [
      '/reports/',
      '/reports/{id}/',
      '/api/admin/reports/{id}/accept/',
      '/safety-map/{city}/roads/',
    ]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});
