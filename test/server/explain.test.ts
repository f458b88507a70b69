// POST /explain-supersafe/ on real extracts (Lower Manhattan, Clerkenwell): the sentence and its
// rules, identical routes, no route, disruptions in force, context mode, the spec's 400 messages,
// 405 and the rate limits (10 per minute per key, 20 per user session). The rule checker over 500
// random trips per city is bench/explain-check.mjs.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { type Comparison, compareRoutes, type KeyDifference } from '../../server/src/explain/facts.js';
import { contextSentences, singleSentence } from '../../server/src/explain/phrase.js';
import type { RouteFacts } from '../../server/src/explain/summary.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

let app: FastifyInstance;

beforeAll(async () => {
  const config = testConfig();
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir, 25);
  buildGraph('london', [path.join(SHARED_DATA, 'osm/london-clerkenwell.osm.pbf')], config.graphDir, 25);
  app = await buildApp({ config });
}, 120_000);
afterAll(() => app.close());

const newKey = () => issueKey(app.repos, { kind: 'app', name: 'explain', source: null, legacyV1: false }).key;
const post = (payload: unknown, key = newKey()) =>
  app.inject({
    method: 'POST',
    url: '/explain-supersafe/',
    headers: { apikey: key },
    payload: payload as object,
  });

// Farringdon to London Wall: Direct rides Aldersgate (A1, very busy), SuperSafe does not.
const FARRINGDON: [number, number] = [-0.109, 51.523];
const LONDON_WALL: [number, number] = [-0.088, 51.516];
// Old Slip to Pine Street along Water Street: both modes ride the same roads.
const SAME = { origin: [-74.00886, 40.70392], destination: [-74.00706, 40.70579] };
// From the East Village hole of the data (no road within the snap radius) to Union Square.
const NONE = { origin: [-73.988, 40.733], destination: [-73.9903, 40.7359] };
const FIXED = 'The most direct route as well as the quietest';

describe('POST /explain-supersafe/ without context', () => {
  it('answers one sentence of at most 120 characters, no trailing period, naming the busiest street avoided', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await post({
        origin: FARRINGDON,
        destination: LONDON_WALL,
        departure_time: '2026-11-24T12:00',
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({ summary: expect.any(String), identical: false });
      const s = body.summary as string;
      seen.add(s);
      expect(s.length).toBeLessThanOrEqual(120);
      expect(s).not.toMatch(/[.!?]$/);
      // The key difference opens the sentence; no distance, percentage or daylight lighting.
      expect(s).toMatch(
        /^(SuperSafe|The SuperSafe route) (avoids busy|keeps you off busy|skips the traffic on|stays clear of the traffic on) Aldersgate\b/,
      );
      expect(s).not.toMatch(/%|percent|\bkm\b|metres|meters|miles|\blit\b|light/);
      // Time only as whole minutes.
      expect(s.replace(/\d+ (extra |more )?minutes?/, '')).not.toMatch(/\d/);
    }
    // Varied phrasing.
    expect(seen.size).toBeGreaterThan(1);
  });

  it('speaks of lighting only on a night comparison', async () => {
    for (let i = 0; i < 5; i++) {
      const day = (await post({ origin: FARRINGDON, destination: LONDON_WALL, nighttime: false })).json();
      expect(day.summary).not.toMatch(/\blit\b|light/);
    }
    const night = await post({ origin: FARRINGDON, destination: LONDON_WALL, nighttime: true });
    expect(night.statusCode).toBe(200);
    expect(night.json().summary).toEqual(expect.any(String));
  });

  it('answers the fixed sentence when both routes ride the same roads', async () => {
    const res = await post(SAME);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ summary: FIXED, identical: true });
  });

  it('answers no_route with a null summary when a route cannot be computed', async () => {
    const res = await post(NONE);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ summary: null, identical: false, no_route: true });
  });

  it('names roadworks in force at the departure first, and only then', async () => {
    const london = app.engine.city('london');
    if (!london) throw new Error('london not loaded');
    const direct = await london.engine.route({
      coordinates: [FARRINGDON, LONDON_WALL],
      profile: 'cycling',
      supersafe: false,
      arcDetails: true,
    });
    const arc = direct?.legs[0]?.arcs.find((a) => a.name === 'Aldersgate');
    if (!arc) throw new Error('Direct no longer rides Aldersgate');
    const [way] = (await london.engine.roads([-0.1, 51.515, -0.09, 51.525], 100_000)).filter(
      (r) => r.wayId === arc.wayId,
    );
    if (!way) throw new Error('way not found');
    const d = app.repos.disruptions.create({
      source: 'wzdx',
      city: 'london',
      name: 'Aldersgate',
      notes: 'resurfacing',
      severity: 'avoid',
      location: [way.geometry[0] as number, way.geometry[1] as number],
      startDate: '2026-11-24',
      startMinute: 8 * 60,
      endDate: '2026-11-24',
      endMinute: 18 * 60,
      wayIds: [arc.wayId],
    });
    app.roadChanges.syncDisruptions('london');
    try {
      for (let i = 0; i < 4; i++) {
        const during = (
          await post({ origin: FARRINGDON, destination: LONDON_WALL, departure_time: '2026-11-24T10:00' })
        ).json();
        expect(during.summary).toMatch(
          /^((SuperSafe|The SuperSafe route) [^,]*roadworks|(With r|R)oadworks)/,
        );
        const after = (
          await post({ origin: FARRINGDON, destination: LONDON_WALL, departure_time: '2026-11-24T19:00' })
        ).json();
        expect(after.summary).not.toMatch(/roadworks|closure/);
      }
    } finally {
      app.repos.disruptions.update(Number(d.id.split(':')[1]), { ...d, endMinute: 8 * 60 });
      app.roadChanges.syncDisruptions('london');
    }
  });
});

describe('POST /explain-supersafe/ with context', () => {
  const summary = (seconds: number, busy: number) => ({
    label: 'SuperSafe™',
    meters: 2300,
    seconds,
    climb_meters: 4,
    descent_meters: 3,
    character_meters: { cycleway: 1200, quiet: 500, shared: 400, moderate: 200, busy },
    lit_share: null,
  });
  const context = {
    safe: summary(760, 0),
    direct: { ...summary(595, 240), label: 'Direct', meters: 1850 },
    avoided: [
      { kind: 'busy_street', name: 'Aldersgate', meters: 72 },
      { kind: 'busy_street', name: 'Montague Street', meters: 35 },
      { kind: 'restricted_turn', name: 'Long Lane', onto: 'Aldersgate' },
    ],
  };

  it('answers two or three sentences of at most 320 characters, naming one street', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await post({ origin: FARRINGDON, destination: LONDON_WALL, context });
      expect(res.statusCode).toBe(200);
      const s = res.json().summary as string;
      expect(s.length).toBeLessThanOrEqual(320);
      expect(s.endsWith('.')).toBe(true);
      const sentences = s.split(/(?<=\.)\s+/);
      expect(sentences.length).toBeGreaterThanOrEqual(2);
      expect(sentences.length).toBeLessThanOrEqual(3);
      expect(sentences[0]).toMatch(/Aldersgate/);
      expect(s).not.toMatch(/Montague|Long Lane/);
      // 165 s longer: two whole minutes.
      expect(s).toMatch(/\b2 minutes\b/);
      expect(s).toMatch(/another busy street/);
      expect(s).toMatch(/a restricted turn/);
    }
  });

  it('puts a closure in force before the busy street, and never says time under a minute', async () => {
    const res = await post({
      origin: FARRINGDON,
      destination: LONDON_WALL,
      context: {
        ...context,
        safe: summary(620, 0),
        avoided: [
          ...context.avoided,
          {
            kind: 'closure_window',
            name: 'Beech Street',
            schedule: 'until 6 pm',
            severity: 'closed',
            attribution: null,
          },
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    const s = res.json().summary as string;
    expect(s.split('. ')[0]).toMatch(/closure on Beech Street \(until 6 pm\)/);
    expect(s).not.toMatch(/minute|longer/);
  });

  it('answers the fixed sentence when the routes collapsed (direct null)', async () => {
    const res = await post({
      origin: FARRINGDON,
      destination: LONDON_WALL,
      context: { ...context, direct: null },
    });
    expect(res.json()).toEqual({ summary: FIXED, identical: true });
  });

  it('refuses a malformed context with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      ['yes', 'context: '],
      [{ ...context, safe: { ...context.safe, lit_share: 2 } }, 'context.safe.lit_share: must be in [0, 1]'],
      [{ ...context, safe: { ...context.safe, meters: -1 } }, 'context.safe.meters: must be a number ≥ 0'],
      [{ ...context, avoided: [{ kind: 'pothole', name: null }] }, 'context.avoided.0.kind: must be one of'],
      [{ ...context, avoided: [{ kind: 'busy_street', name: 'A' }] }, 'context.avoided.0.meters: '],
      [
        { ...context, avoided: [{ kind: 'busy_street', name: 'A', meters: 3, onto: 'B' }] },
        'context.avoided.0: unknown field onto',
      ],
      [
        { ...context, avoided: [{ kind: 'roadworks', name: 'A', schedule: 'today', severity: 'shut' }] },
        'context.avoided.0.severity: ',
      ],
      [{ ...context, avoided: Array(13).fill(context.avoided[0]) }, 'context.avoided: at most 12 items'],
      [{ safe: context.safe, avoided: [] }, 'context.direct: '],
      [{ ...context, extra: 1 }, 'context: unknown field extra'],
    ];
    for (const [ctx, message] of cases) {
      const res = await post({ origin: FARRINGDON, destination: LONDON_WALL, context: ctx }, newKey());
      expect(res.statusCode, JSON.stringify(ctx)).toBe(400);
      expect(res.json().error).toContain(message);
    }
  });
});

describe('POST /explain-supersafe/ errors and limits', () => {
  it('answers the four 400 messages of the spec', async () => {
    const bad = async (payload: unknown) => {
      const res = await post(payload);
      expect(res.statusCode).toBe(400);
      return res.json();
    };
    for (const payload of [
      {},
      { origin: FARRINGDON },
      { origin: 'here', destination: LONDON_WALL },
      { origin: [-0.1], destination: LONDON_WALL },
      { origin: [-0.1, 51.5, 3], destination: LONDON_WALL },
      { origin: FARRINGDON, destination: [200, 51.5] },
      { origin: FARRINGDON, destination: ['-0.1', 51.5] },
    ]) {
      expect((await bad(payload)).error).toBe('origin and destination must be [lon, lat] arrays');
    }
    for (const nighttime of ['true', 1, null]) {
      expect((await bad({ origin: FARRINGDON, destination: LONDON_WALL, nighttime })).error).toBe(
        'nighttime must be a boolean',
      );
    }
    // Bad format, no such day, and a time London's clocks skip (spring forward, 29 March 2026).
    for (const departure_time of [
      'tomorrow',
      '2026-11-24 10:00',
      '2026-02-30T10:00',
      '2026-03-29T01:30',
      5,
    ]) {
      expect((await bad({ origin: FARRINGDON, destination: LONDON_WALL, departure_time })).error).toBe(
        'departure_time is not a valid wall-clock time',
      );
    }
    const cross = await bad({ origin: FARRINGDON, destination: SAME.origin });
    expect(cross.code).toBe('CROSS_CITY_ROUTE');
    expect(cross.error).toMatch(/London/);
  });

  it('answers 405 to every method but POST', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/explain-supersafe/', headers: { apikey: newKey() } });
      expect(res.statusCode).toBe(405);
    }
  });

  it('allows 10 requests a minute per API key and 20 per user session', async () => {
    const payload = { origin: FARRINGDON, destination: LONDON_WALL };
    const key = newKey();
    for (let i = 0; i < 10; i++) expect((await post(payload, key)).statusCode).toBe(200);
    const limited = await post(payload, key);
    expect(limited.statusCode).toBe(429);
    const retry = Number(limited.headers['retry-after']);
    expect(limited.json()).toEqual({ error: 'Rate limit exceeded', retry_after_seconds: retry });

    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'rider@example.org', password: 'correct horse battery', name: 'Rider' },
    });
    const token = signup.json().access_token as string;
    const asUser = () =>
      app.inject({
        method: 'POST',
        url: '/explain-supersafe/',
        headers: { authorization: `Bearer ${token}` },
        payload,
      });
    for (let i = 0; i < 20; i++) expect((await asUser()).statusCode).toBe(200);
    expect((await asUser()).statusCode).toBe(429);
  });

  it('is in the OpenAPI document, with its context', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    const op = doc.paths['/explain-supersafe/'].post;
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['origin', 'destination']));
    expect(Object.keys(schema.properties.context.properties)).toEqual(['safe', 'direct', 'avoided']);
    expect(op.responses['200']).toBeDefined();
  });

  it('requires credentials', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/explain-supersafe/',
      payload: { origin: FARRINGDON, destination: LONDON_WALL },
    });
    expect(res.statusCode).toBe(401);
  });
});

/** A route read from hand-written arcs: `[wayId, name, class, metres, cycle routes?]`. */
function facts(arcs: [number, string, string, number, string[]?][], seconds: number): RouteFacts {
  const f: RouteFacts = {
    summary: {
      label: '',
      meters: 0,
      seconds,
      climb_meters: 0,
      descent_meters: 0,
      character_meters: { cycleway: 0, quiet: 0, shared: 0, moderate: 0, busy: 0 },
      lit_share: null,
    },
    streets: new Map(),
    cycleRoutes: new Map(),
    wayIds: new Set(),
    wayNames: new Map(),
    arcs: [],
    geometry: [0, 0, 0.001, 0.001],
  };
  for (const [way, name, cls, m, routes = []] of arcs) {
    f.summary.meters += m;
    const k = cls === 'very_busy' ? 'busy' : (cls as keyof RouteFacts['summary']['character_meters']);
    f.summary.character_meters[k] += m;
    f.wayIds.add(way);
    f.wayNames.set(way, name);
    f.arcs.push({ arc: way * 2, distance: m });
    const s = f.streets.get(name) ?? { name, meters: 0, busy: 0, veryBusy: 0, cycleRoutes: new Map() };
    s.meters += m;
    if (cls === 'busy') s.busy += m;
    if (cls === 'very_busy') s.veryBusy += m;
    f.streets.set(name, s);
    for (const r of routes) f.cycleRoutes.set(r, (f.cycleRoutes.get(r) ?? 0) + m);
  }
  return f;
}

describe('the explanation facts and wording', () => {
  const direct = facts(
    [
      [1, 'Elm Street', 'quiet', 200],
      [2, 'Main Street', 'moderate', 300],
      [3, 'Oak Street', 'quiet', 200],
    ],
    400,
  );
  const safe = facts(
    [
      [1, 'Elm Street', 'quiet', 200],
      [4, 'Park Lane', 'moderate', 320],
      [3, 'Oak Street', 'quiet', 200],
    ],
    430,
  );

  it('names an accepted rider report when no disruption or busy street makes the difference', () => {
    const report = {
      kind: 'rider_report' as const,
      severity: 'avoid' as const,
      name: '',
      wayIds: [2],
      location: null,
    };
    const c = compareRoutes(safe, direct, false, [report]);
    expect(c?.key).toEqual({ kind: 'rider_report', street: { name: 'Main Street', side: 'direct' } });
    // 30 s longer: no time.
    expect(c?.minutesLonger).toBe(0);
    for (let i = 0; i < 10; i++) {
      const s = singleSentence(c as Comparison) as string;
      expect(s).toMatch(/Main Street/);
      expect(s).toMatch(/rider/);
      expect(s).not.toMatch(/minute/);
    }
    // Without the report, Park Lane is only what SuperSafe takes instead (not the busier route).
    expect(compareRoutes(safe, direct, false, [])?.key).toEqual({
      kind: 'takes',
      street: { name: 'Park Lane', side: 'safe' },
    });
  });

  it('keeps every sentence within the rules, whatever the names and facts', () => {
    let seed = 5;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const name = () => `${'Long'.repeat(1 + Math.floor(rnd() * 12))} Street`;
    for (let i = 0; i < 2000; i++) {
      const a = name();
      const b = name();
      const keys: KeyDifference[] = [
        { kind: 'busy_street', street: { name: a, side: 'direct' } },
        {
          kind: 'disruption',
          works: 'roadworks',
          severity: 'closed',
          street: rnd() < 0.5 ? { name: a, side: 'direct' } : null,
          schedule: 'until 6 pm',
        },
        { kind: 'rider_report', street: null },
        { kind: 'takes', street: { name: b, side: 'safe' } },
        { kind: 'quieter' },
      ];
      const c: Comparison = {
        key: keys[Math.floor(rnd() * keys.length)] as KeyDifference,
        via: rnd() < 0.6 ? { name: b, side: 'safe' } : null,
        minutesLonger: Math.floor(rnd() * 4),
        betterLit: rnd() < 0.3,
        lessClimb: rnd() < 0.2,
        others: { busyStreets: Math.floor(rnd() * 3), turns: Math.floor(rnd() * 2), reports: 0, works: 0 },
      };
      const one = singleSentence(c, rnd);
      if (one !== null) {
        expect(one.length).toBeLessThanOrEqual(120);
        const rest = one.replaceAll(a, '').replaceAll(b, '');
        expect(rest).not.toMatch(/[.!?]/);
        expect(rest).not.toMatch(/Street/);
        expect(rest.replace(/\d+ (extra |more )?minutes?/, '')).not.toMatch(/\d/);
        if (c.minutesLonger === 0) expect(rest).not.toMatch(/minute/);
        if (!c.betterLit) expect(rest).not.toMatch(/\blit\b|light/);
      }
      const ctx = contextSentences(c, rnd() < 0.5, rnd);
      if (ctx !== null) {
        expect(ctx.length).toBeLessThanOrEqual(320);
        const n = ctx
          .replaceAll(a, 'A')
          .replaceAll(b, 'B')
          .split(/(?<=\.)\s+/).length;
        expect(n).toBeGreaterThanOrEqual(2);
        expect(n).toBeLessThanOrEqual(3);
      }
    }
  });
});
