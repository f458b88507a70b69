// GET /functions/v1/weather against an Open-Meteo stand-in and a WeatherKit stand-in on 127.0.0.1:
// the mapping of every WMO code, units and rounding, the Cold/Hot modifiers, the 10-minute cache,
// the lat/lon aliases, 400/500/503, WeatherKit's developer token, and the weather of recorded rides.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { decodeProtectedHeader, exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { encodePolyline } from '../../server/src/routing/polyline.js';
import { WMO_CONDITIONS } from '../../server/src/weather/conditions.js';
import { testConfig } from '../helpers.js';

// The Open-Meteo stand-in reads its answer from the coordinate asked for: the WMO code is
// (latitude − 10) × 10, the temperature (°F) is the longitude. Latitudes 80–82 misbehave.
const FAIL_LAT = 80;
const SLOW_LAT = 81;
const BROKEN_LAT = 82;
const wmoLatitude = (code: number) => 10 + code / 10;

let openMeteo: http.Server;
let weatherKit: http.Server;
const openMeteoCalls: URL[] = [];
const weatherKitAuth: string[] = [];
const timers = new Set<NodeJS.Timeout>();

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

let app: FastifyInstance;
let kitApp: FastifyInstance;
let unconfiguredKitApp: FastifyInstance;
let key = '';
let kitKey = '';
let publicKeyPem = '';

const get = (url: string, k = key, target = app) =>
  target.inject({ method: 'GET', url, headers: { apikey: k } });

beforeAll(async () => {
  openMeteo = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    openMeteoCalls.push(url);
    if (url.pathname !== '/v1/forecast') return json(res, 404, { error: true, reason: 'Not Found' });
    const lat = Number(url.searchParams.get('latitude'));
    const lon = Number(url.searchParams.get('longitude'));
    if (lat === FAIL_LAT) return json(res, 500, { error: true, reason: 'Internal' });
    if (lat === SLOW_LAT) {
      const t = setTimeout(() => json(res, 200, {}), 6000);
      timers.add(t);
      return;
    }
    if (lat === BROKEN_LAT) return json(res, 200, { current: { time: '2026-11-23T15:00' } });
    json(res, 200, {
      latitude: lat,
      longitude: lon,
      current_units: { temperature_2m: '°F', wind_speed_10m: 'mp/h' },
      current: {
        time: '2026-11-23T15:00',
        interval: 900,
        temperature_2m: lon,
        apparent_temperature: lon - 3.04,
        relative_humidity_2m: 67,
        weather_code: Math.round((lat - 10) * 10),
        wind_speed_10m: 9.46,
        wind_direction_10m: lat > 50 ? 360 : 225,
      },
    });
  });
  weatherKit = http.createServer((req, res) => {
    weatherKitAuth.push(req.headers.authorization ?? '');
    const m = /^\/api\/v1\/weather\/en\/([-\d.]+)\/([-\d.]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (!m || !req.url?.includes('dataSets=currentWeather')) return json(res, 404, {});
    json(res, 200, {
      currentWeather: {
        name: 'CurrentWeather',
        metadata: { latitude: Number(m[1]), longitude: Number(m[2]) },
        asOf: '2026-11-23T15:00:00Z',
        conditionCode: 'MostlyCloudy',
        humidity: 0.81,
        temperature: 31.5,
        temperatureApparent: 34.2,
        windDirection: 190,
        windSpeed: 12.3,
      },
    });
  });
  const [omUrl, wkUrl] = await Promise.all([listen(openMeteo), listen(weatherKit)]);

  app = await buildApp({ config: testConfig({ QUIETWAY_OPEN_METEO_URL: omUrl }) });
  key = issueKey(app.repos, { kind: 'publishable', name: 'web', source: null, legacyV1: false }).key;

  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  publicKeyPem = await exportSPKI(publicKey);
  kitApp = await buildApp({
    config: testConfig({
      QUIETWAY_WEATHER_PROVIDER: 'weatherkit',
      QUIETWAY_WEATHERKIT_URL: wkUrl,
      QUIETWAY_WEATHERKIT_TEAM_ID: 'TEAM123456',
      QUIETWAY_WEATHERKIT_SERVICE_ID: 'org.quietway.weather',
      QUIETWAY_WEATHERKIT_KEY_ID: 'KEY7654321',
      // One line, as an environment variable holds it.
      QUIETWAY_WEATHERKIT_PRIVATE_KEY: (await exportPKCS8(privateKey)).replaceAll('\n', '\\n'),
    }),
  });
  kitKey = issueKey(kitApp.repos, { kind: 'service', name: 's', source: null, legacyV1: false }).key;
  unconfiguredKitApp = await buildApp({
    config: testConfig({ QUIETWAY_WEATHER_PROVIDER: 'weatherkit', QUIETWAY_WEATHERKIT_URL: wkUrl }),
  });
});

afterAll(async () => {
  for (const t of timers) clearTimeout(t);
  await Promise.all([app.close(), kitApp.close(), unconfiguredKitApp.close()]);
  for (const s of [openMeteo, weatherKit]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('GET /functions/v1/weather (Open-Meteo)', () => {
  it('answers the spec shape in Fahrenheit and mph, asking the upstream for those units', async () => {
    const res = await get(`/functions/v1/weather?latitude=${wmoLatitude(2)}&longitude=61.27`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=600');
    expect(res.json()).toEqual({
      temperature: 61.3,
      feels_like: 58.2,
      conditions: ['PartlyCloudy'],
      wind_speed: 9.5,
      wind_direction: 225,
      humidity: 67,
    });
    const call = openMeteoCalls.at(-1) as URL;
    expect(call.searchParams.get('temperature_unit')).toBe('fahrenheit');
    expect(call.searchParams.get('wind_speed_unit')).toBe('mph');
    expect(call.searchParams.get('current')?.split(',')).toEqual(
      expect.arrayContaining([
        'temperature_2m',
        'weather_code',
        'wind_direction_10m',
        'relative_humidity_2m',
      ]),
    );
  });

  it.each(Object.entries(WMO_CONDITIONS))('maps WMO code %s to %s', async (code, condition) => {
    const res = await get(`/functions/v1/weather?lat=${wmoLatitude(Number(code))}&lon=60`);
    expect(res.statusCode).toBe(200);
    expect(res.json().conditions).toEqual([condition]);
  });

  it('adds Cold below 40 F and Hot above 85 F, nothing at the limits', async () => {
    const at = async (f: number) =>
      (await get(`/functions/v1/weather?latitude=${wmoLatitude(0)}&longitude=${f}`)).json().conditions;
    expect(await at(39.9)).toEqual(['Clear', 'Cold']);
    expect(await at(40)).toEqual(['Clear']);
    expect(await at(85)).toEqual(['Clear']);
    expect(await at(85.1)).toEqual(['Clear', 'Hot']);
  });

  it('answers a calm or north wind as a direction in [0, 360)', async () => {
    const res = await get(`/functions/v1/weather?latitude=${wmoLatitude(3) + 50}&longitude=50`);
    // 53.0 is above 50: the stand-in answers 360°, which is 0°.
    expect(res.json().wind_direction).toBe(0);
  });

  it('caches an answer 10 minutes per rounded coordinate', async () => {
    const before = openMeteoCalls.length;
    const a = await get('/functions/v1/weather?latitude=11.001&longitude=70.002');
    const b = await get('/functions/v1/weather?lat=11.004&lon=69.998');
    expect(a.json()).toEqual(b.json());
    expect(openMeteoCalls.length).toBe(before + 1);
    await get('/functions/v1/weather?latitude=11.02&longitude=70');
    expect(openMeteoCalls.length).toBe(before + 2);
  });

  it.each([
    ['', 'latitude is required'],
    ['?longitude=10', 'latitude is required'],
    ['?latitude=10', 'longitude is required'],
    ['?latitude=abc&longitude=10', 'latitude must be a number'],
    ['?latitude=&longitude=10', 'latitude must be a number'],
    ['?latitude=91&longitude=10', 'latitude must be in [-90, 90]'],
    ['?lat=10&lon=-180.5', 'longitude must be in [-180, 180]'],
    ['?latitude=10&longitude=Infinity', 'longitude must be a number'],
  ])('answers 400 for %s', async (query, message) => {
    const res = await get(`/functions/v1/weather${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(message);
  });

  it('answers 500 when the upstream fails, breaks its answer or takes longer than 4 s', async () => {
    for (const lat of [FAIL_LAT, BROKEN_LAT]) {
      const res = await get(`/functions/v1/weather?latitude=${lat}&longitude=10`);
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toBe('Weather provider failed');
    }
    const start = Date.now();
    const slow = await get(`/functions/v1/weather?latitude=${SLOW_LAT}&longitude=10`);
    expect(slow.statusCode).toBe(500);
    expect(Date.now() - start).toBeGreaterThanOrEqual(3900);
  });

  it('refuses callers without credentials', async () => {
    const res = await app.inject({ method: 'GET', url: '/functions/v1/weather?lat=10&lon=10' });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /functions/v1/weather (WeatherKit)', () => {
  it('signs an ES256 developer token with kid and id headers and converts the metric answer', async () => {
    const res = await get('/functions/v1/weather?latitude=40.73&longitude=-74', kitKey, kitApp);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      temperature: 88.7,
      feels_like: 93.6,
      conditions: ['MostlyCloudy', 'Hot'],
      wind_speed: 7.6,
      wind_direction: 190,
      humidity: 81,
    });
    const auth = weatherKitAuth.at(-1) as string;
    expect(auth).toMatch(/^Bearer /);
    const jwt = auth.slice('Bearer '.length);
    expect(decodeProtectedHeader(jwt)).toEqual({
      alg: 'ES256',
      kid: 'KEY7654321',
      id: 'TEAM123456.org.quietway.weather',
    });
    const { payload } = await jwtVerify(jwt, await importSPKI(publicKeyPem, 'ES256'));
    expect(payload.iss).toBe('TEAM123456');
    expect(payload.sub).toBe('org.quietway.weather');
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
  });

  it('answers 503 when WeatherKit is selected without its credentials', async () => {
    const k = issueKey(unconfiguredKitApp.repos, {
      kind: 'service',
      name: 's',
      source: null,
      legacyV1: false,
    }).key;
    const res = await get('/functions/v1/weather?latitude=40.73&longitude=-74', k, unconfiguredKitApp);
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatch(/not configured/);
  });
});

describe('recorded rides', () => {
  it('get their weather fields from the service, at the ride’s start, in the background', async () => {
    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'rider@example.org', password: 'long enough pw', name: 'Rider' },
    });
    const auth = { authorization: `Bearer ${signup.json().access_token}` };
    // Starts where the stand-in answers drizzle (WMO 53) at 38.5 F.
    const start: [number, number] = [38.5, wmoLatitude(53)];
    const res = await app.inject({
      method: 'POST',
      url: '/user/routes/',
      headers: auth,
      payload: {
        date_started: '2026-11-23T14:30:00Z',
        local_timezone: 'America/New_York',
        polyline: encodePolyline([start, [38.51, wmoLatitude(53) + 0.01]]),
        distance_traveled: 1500,
        duration_traveled: 420,
        completed: true,
      },
    });
    expect(res.statusCode).toBe(201);
    const id = res.json().id;
    let ride: Record<string, unknown> = {};
    for (let i = 0; i < 50 && !ride.weather_fetched_at; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ride = (await app.inject({ method: 'GET', url: `/user/routes/${id}/`, headers: auth })).json();
    }
    expect(ride).toMatchObject({
      weather_conditions: ['Drizzle', 'Cold'],
      temperature: 38.5,
      wind_speed: 9.5,
      weather_display: '39°F, drizzle',
    });
    expect(Date.parse(ride.weather_fetched_at as string)).not.toBeNaN();
    const call = openMeteoCalls.at(-1) as URL;
    expect(Number(call.searchParams.get('latitude'))).toBeCloseTo(start[1], 2);
  });
});
