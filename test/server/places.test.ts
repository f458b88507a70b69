// Place search with the `google` provider against a Places API (New) stand-in on 127.0.0.1 that
// answers recorded-style responses: request shapes, the two parallel calls, dropped non-place
// suggestions, omitted fields, a slow upstream (504 at 4 s), a failing one (502), a failing bounded
// call (`restricted` null), a missing key (503), validation, credentials and the shared rate limit.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { testConfig } from '../helpers.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

// A recorded-style Places API (New) autocomplete answer: two place predictions (one without
// secondary text or types) and a query prediction, which is not a place.
const SUGGESTIONS = {
  suggestions: [
    {
      placePrediction: {
        place: 'places/ChIJmQJIxlVYwokRLgeuocVOGVU',
        placeId: 'ChIJmQJIxlVYwokRLgeuocVOGVU',
        text: {
          text: 'Hudson River Greenway, New York, NY, USA',
          matches: [{ endOffset: 9 }],
        },
        structuredFormat: {
          mainText: { text: 'Hudson River Greenway', matches: [{ endOffset: 9 }] },
          secondaryText: { text: 'New York, NY, USA' },
        },
        types: ['route', 'geocode'],
        distanceMeters: 1834,
      },
    },
    { queryPrediction: { text: { text: 'hudson river bike rental' } } },
    {
      placePrediction: {
        place: 'places/ChIJ-hudson-yards',
        placeId: 'ChIJ-hudson-yards',
        text: { text: 'Hudson Yards' },
        structuredFormat: { mainText: { text: 'Hudson Yards' } },
      },
    },
  ],
};

const BOUNDED = {
  suggestions: [
    {
      placePrediction: {
        placeId: 'ChIJ-inside-box',
        text: { text: 'Hudson Street, New York, NY, USA' },
        structuredFormat: {
          mainText: { text: 'Hudson Street' },
          secondaryText: { text: 'New York, NY, USA' },
        },
        types: ['route'],
        distanceMeters: 950,
      },
    },
  ],
};

const DETAILS = {
  id: 'ChIJmQJIxlVYwokRLgeuocVOGVU',
  displayName: { text: 'Hudson River Greenway', languageCode: 'en' },
  formattedAddress: 'Hudson River Greenway, New York, NY, USA',
  location: { latitude: 40.7532, longitude: -74.0079 },
  types: ['route', 'geocode'],
};

let upstream: http.Server;
let upstreamUrl = '';
const seen: Seen[] = [];
const pending = new Set<NodeJS.Timeout>();

function startUpstream(): Promise<void> {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.headers['x-goog-api-key'] !== 'test-key') {
        return send(403, { error: { code: 403, status: 'PERMISSION_DENIED' } });
      }
      if (req.method === 'POST' && req.url === '/v1/places:autocomplete') {
        const input = body?.input;
        const bounded = body?.locationRestriction !== undefined;
        if (input === 'slow') {
          // Answers after the 4 s time-out.
          const t = setTimeout(() => send(200, SUGGESTIONS), 6000);
          pending.add(t);
          return;
        }
        if (input === 'fail') return send(500, { error: { code: 500, status: 'INTERNAL' } });
        if (input === 'quota') return send(429, { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
        if (input === 'garbage') {
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end('<html>oops</html>');
        }
        if (input === 'bounded fails' && bounded) {
          return send(503, { error: { code: 503, status: 'UNAVAILABLE' } });
        }
        if (input === 'nothing') return send(200, {});
        return send(200, bounded ? BOUNDED : SUGGESTIONS);
      }
      if (req.method === 'GET' && req.url?.startsWith('/v1/places/')) {
        const id = decodeURIComponent(req.url.slice('/v1/places/'.length).split('?')[0] ?? '');
        if (id === DETAILS.id) return send(200, DETAILS);
        return send(404, { error: { code: 404, status: 'NOT_FOUND' } });
      }
      send(404, { error: { code: 404 } });
    });
  });
  return new Promise((resolve) =>
    upstream.listen(0, '127.0.0.1', () => {
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

let app: FastifyInstance;
let noKeyApp: FastifyInstance;
let limitedApp: FastifyInstance;
let service = '';
let publishable = '';
let appKey = '';
let limitedKey = '';
const TOKEN = 'a2b4c6d8-0000-4000-8000-123456789abc';

const autocomplete = (payload: unknown, key = service, target = app) =>
  target.inject({
    method: 'POST',
    url: '/functions/v1/place-search/autocomplete',
    headers: { apikey: key },
    payload: payload as object,
  });

beforeAll(async () => {
  await startUpstream();
  const google = {
    QUIETWAY_PLACES_PROVIDER: 'google',
    QUIETWAY_GOOGLE_PLACES_API_KEY: 'test-key',
    QUIETWAY_GOOGLE_PLACES_URL: `${upstreamUrl}/`,
  };
  app = await buildApp({ config: testConfig(google) });
  service = issueKey(app.repos, { kind: 'service', name: 's', source: null, legacyV1: false }).key;
  publishable = issueKey(app.repos, { kind: 'publishable', name: 'p', source: null, legacyV1: false }).key;
  appKey = issueKey(app.repos, { kind: 'app', name: 'a', source: null, legacyV1: false }).key;
  noKeyApp = await buildApp({
    config: testConfig({ QUIETWAY_PLACES_PROVIDER: 'google', QUIETWAY_GOOGLE_PLACES_URL: upstreamUrl }),
  });
  limitedApp = await buildApp({
    config: testConfig({ ...google, QUIETWAY_RATE_LIMITS: '{"place_search":{"ip":[3,60]}}' }),
  });
  limitedKey = issueKey(limitedApp.repos, {
    kind: 'publishable',
    name: 'p',
    source: null,
    legacyV1: false,
  }).key;
});

afterAll(async () => {
  for (const t of pending) clearTimeout(t);
  await Promise.all([app.close(), noKeyApp.close(), limitedApp.close()]);
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

describe('POST /functions/v1/place-search/autocomplete (google)', () => {
  it('makes the unrestricted call with a 50 km bias circle and the bounded call with the rectangle, in parallel', async () => {
    seen.length = 0;
    const res = await autocomplete({
      input: 'hudson riv',
      sessionToken: TOKEN,
      origin: { latitude: 40.7359, longitude: -74.0036 },
      bbox: [-74.03, 40.69, -73.97, 40.76],
    });
    expect(res.statusCode).toBe(200);
    const calls = seen.filter((s) => s.url === '/v1/places:autocomplete');
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(c.headers['x-goog-api-key']).toBe('test-key');
      expect(c.headers['content-type']).toContain('application/json');
      expect(c.body?.input).toBe('hudson riv');
      expect(c.body?.sessionToken).toBe(TOKEN);
      expect(c.body?.origin).toEqual({ latitude: 40.7359, longitude: -74.0036 });
    }
    const open = calls.find((c) => c.body?.locationBias);
    const bounded = calls.find((c) => c.body?.locationRestriction);
    expect(open?.body?.locationBias).toEqual({
      circle: { center: { latitude: 40.7359, longitude: -74.0036 }, radius: 50000 },
    });
    expect(open?.body?.locationRestriction).toBeUndefined();
    expect(bounded?.body?.locationRestriction).toEqual({
      rectangle: {
        low: { latitude: 40.69, longitude: -74.03 },
        high: { latitude: 40.76, longitude: -73.97 },
      },
    });
    expect(bounded?.body?.locationBias).toBeUndefined();

    const body = res.json();
    // The query prediction is dropped; fields the upstream left out are absent, never null.
    expect(body.unrestricted).toEqual([
      {
        placeId: 'ChIJmQJIxlVYwokRLgeuocVOGVU',
        text: { text: 'Hudson River Greenway, New York, NY, USA' },
        structuredFormat: {
          mainText: { text: 'Hudson River Greenway' },
          secondaryText: { text: 'New York, NY, USA' },
        },
        types: ['route', 'geocode'],
        distanceMeters: 1834,
      },
      {
        placeId: 'ChIJ-hudson-yards',
        text: { text: 'Hudson Yards' },
        structuredFormat: { mainText: { text: 'Hudson Yards' } },
      },
    ]);
    expect(body.restricted).toEqual([
      {
        placeId: 'ChIJ-inside-box',
        text: { text: 'Hudson Street, New York, NY, USA' },
        structuredFormat: {
          mainText: { text: 'Hudson Street' },
          secondaryText: { text: 'New York, NY, USA' },
        },
        types: ['route'],
        distanceMeters: 950,
      },
    ]);
  });

  it('makes one call, without bias or distances, when neither origin nor bbox is sent', async () => {
    seen.length = 0;
    const res = await autocomplete({ input: 'hudson', sessionToken: TOKEN });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).toEqual({ input: 'hudson', sessionToken: TOKEN });
    const body = res.json();
    expect(body.restricted).toBeNull();
    expect(body.unrestricted[0].distanceMeters).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('null,');
  });

  it('answers an empty list when the upstream has no suggestions', async () => {
    const res = await autocomplete({
      input: 'nothing',
      sessionToken: TOKEN,
      bbox: [-74.1, 40.6, -73.9, 40.8],
    });
    expect(res.json()).toEqual({ unrestricted: [], restricted: [] });
  });

  it('answers restricted null when only the bounded call fails', async () => {
    const res = await autocomplete({
      input: 'bounded fails',
      sessionToken: TOKEN,
      bbox: [-74.03, 40.69, -73.97, 40.76],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().restricted).toBeNull();
    expect(res.json().unrestricted).toHaveLength(2);
  });

  it('answers 502 with upstream_status when the upstream fails', async () => {
    for (const [input, status] of [
      ['fail', 500],
      ['quota', 429],
    ] as const) {
      const res = await autocomplete({ input, sessionToken: TOKEN });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ error: expect.any(String), upstream_status: status });
    }
    const res = await autocomplete({ input: 'garbage', sessionToken: TOKEN });
    expect(res.statusCode).toBe(502);
    expect(res.json().upstream_status).toBe(200);
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = await buildApp({
      config: testConfig({
        QUIETWAY_PLACES_PROVIDER: 'google',
        QUIETWAY_GOOGLE_PLACES_API_KEY: 'test-key',
        QUIETWAY_GOOGLE_PLACES_URL: `http://127.0.0.1:${port}`,
      }),
    });
    const key = issueKey(down.repos, { kind: 'service', name: 's', source: null, legacyV1: false }).key;
    const res = await autocomplete({ input: 'hudson', sessionToken: TOKEN }, key, down);
    await down.close();
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ upstream_status: null });
  });

  it('answers 504 when the upstream takes longer than 4 seconds', async () => {
    const start = Date.now();
    const res = await autocomplete({ input: 'slow', sessionToken: TOKEN });
    const elapsed = Date.now() - start;
    expect(res.statusCode).toBe(504);
    expect(res.json().error).toEqual(expect.any(String));
    expect(elapsed).toBeGreaterThanOrEqual(3900);
    expect(elapsed).toBeLessThan(5900);
  });

  it('answers 503 when no Google key is configured', async () => {
    const key = issueKey(noKeyApp.repos, { kind: 'service', name: 's', source: null, legacyV1: false }).key;
    const res = await autocomplete({ input: 'hudson', sessionToken: TOKEN }, key, noKeyApp);
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatch(/not configured/);
    const details = await noKeyApp.inject({
      method: 'GET',
      url: `/functions/v1/place-search/details?placeId=x&sessionToken=${TOKEN}`,
      headers: { apikey: key },
    });
    expect(details.statusCode).toBe(503);
  });

  it.each([
    [{ sessionToken: TOKEN }, 'input'],
    [{ input: '', sessionToken: TOKEN }, 'input'],
    [{ input: '   ', sessionToken: TOKEN }, 'input'],
    [{ input: 'x'.repeat(257), sessionToken: TOKEN }, 'input'],
    [{ input: 'hudson' }, 'sessionToken'],
    [{ input: 'hudson', sessionToken: 't'.repeat(129) }, 'sessionToken'],
    [{ input: 'hudson', sessionToken: TOKEN, origin: { latitude: 91, longitude: 0 } }, 'origin'],
    [{ input: 'hudson', sessionToken: TOKEN, origin: { latitude: 40 } }, 'origin'],
    [{ input: 'hudson', sessionToken: TOKEN, bbox: [-73.9, 40.6, -74.1, 40.8] }, 'bbox'],
    [{ input: 'hudson', sessionToken: TOKEN, bbox: [-74.1, 40.8, -73.9, 40.8] }, 'bbox'],
    [{ input: 'hudson', sessionToken: TOKEN, bbox: [-74.1, 40.6, -73.9] }, 'bbox'],
    [{ input: 'hudson', sessionToken: TOKEN, bbox: [-200, 40.6, -73.9, 40.8] }, 'bbox'],
  ])('answers 400 for %j', async (payload, field) => {
    const res = await autocomplete(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain(field);
  });

  it('accepts 256 characters and a 128-character session token', async () => {
    const res = await autocomplete({ input: 'h'.repeat(256), sessionToken: 't'.repeat(128) });
    expect(res.statusCode).toBe(200);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/functions/v1/place-search/autocomplete',
      headers: { apikey: service, 'content-type': 'application/json' },
      payload: '{"input": "hud',
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('credentials, subroutes and methods', () => {
  it('accepts a publishable key and a user session; refuses anonymous callers and app keys', async () => {
    expect((await autocomplete({ input: 'hudson', sessionToken: TOKEN }, publishable)).statusCode).toBe(200);
    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'rider@example.org', password: 'long enough pw', name: 'Rider' },
    });
    const user = await app.inject({
      method: 'POST',
      url: '/functions/v1/place-search/autocomplete',
      headers: { authorization: `Bearer ${signup.json().access_token}` },
      payload: { input: 'hudson', sessionToken: TOKEN },
    });
    expect(user.statusCode).toBe(200);
    const anonymous = await app.inject({
      method: 'POST',
      url: '/functions/v1/place-search/autocomplete',
      payload: { input: 'hudson', sessionToken: TOKEN },
    });
    expect(anonymous.statusCode).toBe(401);
    const wrongKind = await autocomplete({ input: 'hudson', sessionToken: TOKEN }, appKey);
    expect(wrongKind.statusCode).toBe(401);
    expect(wrongKind.json().error).toBe('Endpoint requires one of: user, service');
  });

  it('answers 404 for an unknown place-search subroute and 405 for a wrong method', async () => {
    for (const [method, url] of [
      ['POST', '/functions/v1/place-search/nearby'],
      ['GET', '/functions/v1/place-search/autocomplete/extra'],
      ['GET', '/functions/v1/place-search/'],
    ] as const) {
      const res = await app.inject({ method, url, headers: { apikey: service } });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toEqual(expect.any(String));
    }
    const res = await app.inject({
      method: 'GET',
      url: '/functions/v1/place-search/autocomplete',
      headers: { apikey: service },
    });
    expect(res.statusCode).toBe(405);
  });

  it('counts autocomplete and details against one limit per IP for publishable keys (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      statuses.push(
        (await autocomplete({ input: 'hudson', sessionToken: TOKEN }, limitedKey, limitedApp)).statusCode,
      );
    }
    const details = () =>
      limitedApp.inject({
        method: 'GET',
        url: `/functions/v1/place-search/details?placeId=${DETAILS.id}&sessionToken=${TOKEN}`,
        headers: { apikey: limitedKey },
      });
    statuses.push((await details()).statusCode);
    const refused = await details();
    expect(statuses).toEqual([200, 200, 200]);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().retry_after_seconds).toBeGreaterThan(0);
    expect(refused.headers['retry-after']).toBe(String(refused.json().retry_after_seconds));
  });
});

describe('GET /functions/v1/place-search/details (google)', () => {
  it('resolves a prediction with the session token and the field mask', async () => {
    seen.length = 0;
    const res = await app.inject({
      method: 'GET',
      url: `/functions/v1/place-search/details?placeId=${DETAILS.id}&sessionToken=${TOKEN}`,
      headers: { apikey: service },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      placeId: DETAILS.id,
      displayName: 'Hudson River Greenway',
      formattedAddress: 'Hudson River Greenway, New York, NY, USA',
      location: { latitude: 40.7532, longitude: -74.0079 },
      types: ['route', 'geocode'],
    });
    expect(seen[0]?.url).toBe(`/v1/places/${DETAILS.id}?sessionToken=${TOKEN}`);
    expect(seen[0]?.headers['x-goog-fieldmask']).toBe('id,displayName,formattedAddress,location,types');
  });

  it('answers 404 for a place the provider does not know, 400 without placeId', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/functions/v1/place-search/details?placeId=ChIJ-unknown',
      headers: { apikey: service },
    });
    expect(res.statusCode).toBe(404);
    const missing = await app.inject({
      method: 'GET',
      url: '/functions/v1/place-search/details',
      headers: { apikey: service },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toContain('placeId');
  });
});
