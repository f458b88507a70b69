// The GBFS client against the recorded feeds served over real HTTP on 127.0.0.1: auto-discovery from
// 1.1 to 3.0 (and a 3.0 manifest), ttl-driven refresh, a failing and a slow feed, and /health/.
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { GbfsSystem } from '../../server/src/gbfs/client.js';
import {
  discovery,
  type GbfsTestServer,
  recorded,
  rewrittenDiscovery,
  startGbfsServer,
} from '../gbfs-server.js';
import { testConfig } from '../helpers.js';

const silent = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child() {
    return silent;
  },
  level: 'silent',
} as unknown as FastifyBaseLogger;

const OPTIONS = { timeoutMs: 1500, staleSeconds: 180, minRefreshSeconds: 1, maxRefreshSeconds: 3600 };

let srv: GbfsTestServer;
const systems: GbfsSystem[] = [];
const system = (
  url: string,
  extra: Partial<{ name: string; system_id: string }> = {},
  now?: () => number,
) => {
  const s = new GbfsSystem({ id: `s${systems.length}`, city: 'nyc', url, ...extra }, OPTIONS, silent, now);
  systems.push(s);
  return s;
};

beforeAll(async () => {
  srv = await startGbfsServer({
    ...recorded('citibike-nyc-2024-10-02', 'citibike'),
    ...recorded('divvy-chicago-2025-01-29', 'divvy'),
    ...recorded('baywheels-sf-2020-05-dockless', 'baywheels'),
  });
  srv.set('/citibike/gbfs.json', {
    json: discovery(srv.base, 'citibike', ['station_information', 'station_status'], '1.1'),
  });
  srv.set('/divvy/gbfs.json', { json: rewrittenDiscovery('divvy-chicago-2025-01-29', srv.base, 'divvy') });
  srv.set('/baywheels/gbfs.json', {
    json: rewrittenDiscovery('baywheels-sf-2020-05-dockless', srv.base, 'baywheels'),
  });
});
afterAll(async () => {
  for (const s of systems) s.stop();
  await srv.close();
});

describe('GBFS client', () => {
  it('discovers a 1.1 system (Citi Bike) and joins stations with their live status', async () => {
    const s = system(`${srv.base}/citibike/gbfs.json`, { name: 'Citi Bike' });
    await s.start();
    const stations = s.stations();
    expect(stations.length).toBeGreaterThan(2000);
    const first = stations.find((x) => x.id === 'bfe5e69d-89ff-48b3-bf20-80cbdfa443e0');
    if (first) {
      expect(first.bikes).toBe(16);
      expect(first.ebikes).toBe(2);
      expect(first.docks).toBe(30);
    }
    expect(stations.every((x) => Number.isFinite(x.lon) && Number.isFinite(x.lat))).toBe(true);
    expect(s.name).toBe('Citi Bike');
    expect(s.health().status).toBe('ok');
    expect(s.health().version).toBe('1.1');
  });

  it('reads the whole 2.3 set (Divvy): vehicle types, dockless e-bikes with range, pricing, apps', async () => {
    const s = system(`${srv.base}/divvy/gbfs.json`);
    await s.start();
    expect(s.name).toBe('Divvy');
    expect(s.stations().length).toBeGreaterThan(1000);
    const v = s.vehicles();
    expect(v.length).toBeGreaterThan(500);
    const ebike = v.find((x) => x.electric && x.formFactor === 'bicycle');
    expect(ebike?.currentRangeMeters).toBeGreaterThan(0);
    expect(v.some((x) => x.formFactor === 'scooter')).toBe(true);
    expect(s.pricingPlans.map((p) => p.id)).toContain('EBIKE_SINGLE_RIDE');
    expect(s.pricingPlans[0]?.perMin[0]).toEqual({ start: 0, rate: 0.44, interval: 1, end: null });
    expect(s.vehicleTypes.get('2')?.propulsion).toBe('electric_assist');
    // feeds the discovery file lists but the recording lacks answer 404: that feed is failing
    expect(s.health().feeds.find((f) => f.name === 'station_status')?.status).toBe('ok');
  });

  it('reads pre-standard Bay Wheels dockless e-bikes (type: electric_bike) from 2020', async () => {
    const s = system(`${srv.base}/baywheels/gbfs.json`);
    await s.start();
    const v = s.vehicles();
    expect(v.length).toBeGreaterThan(500);
    expect(v.every((x) => x.electric)).toBe(true);
    // station_status and system_information were not recorded: those feeds fail, the rest works
    const h = s.health();
    expect(h.status).toBe('degraded');
    expect(h.feeds.find((f) => f.name === 'station_status')?.status).toBe('failing');
  });

  it('follows a GBFS 3.0 manifest to the system, with localized names and vehicle_status', async () => {
    srv.set('/v3/manifest.json', {
      json: {
        last_updated: '2026-11-23T12:00:00Z',
        ttl: 3600,
        version: '3.0',
        data: {
          datasets: [
            { system_id: 'other', versions: [{ version: '3.0', url: `${srv.base}/nowhere.json` }] },
            {
              system_id: 'demo',
              versions: [
                { version: '2.3', url: `${srv.base}/nowhere.json` },
                { version: '3.0', url: `${srv.base}/v3/gbfs.json` },
              ],
            },
          ],
        },
      },
    });
    srv.set('/v3/gbfs.json', {
      json: {
        last_updated: '2026-11-23T12:00:00Z',
        ttl: 60,
        version: '3.0',
        data: {
          feeds: ['system_information', 'vehicle_types', 'vehicle_status'].map((name) => ({
            name,
            url: `${srv.base}/v3/${name}.json`,
          })),
        },
      },
    });
    srv.set('/v3/system_information.json', {
      json: {
        last_updated: '2026-11-23T12:00:00Z',
        ttl: 60,
        version: '3.0',
        data: {
          system_id: 'demo',
          name: [{ text: 'Demo Bikes', language: 'en' }],
          rental_apps: { ios: { store_uri: 'https://apps.apple.com/app/id1' } },
          brand_assets: { brand_image_url: 'https://example.org/logo.svg' },
        },
      },
    });
    srv.set('/v3/vehicle_types.json', {
      json: {
        last_updated: '2026-11-23T12:00:00Z',
        ttl: 60,
        version: '3.0',
        data: {
          vehicle_types: [
            {
              vehicle_type_id: 'e',
              form_factor: 'bicycle',
              propulsion_type: 'electric_assist',
              max_range_meters: 40000,
            },
          ],
        },
      },
    });
    srv.set('/v3/vehicle_status.json', {
      json: {
        last_updated: '2026-11-23T12:00:00Z',
        ttl: 30,
        version: '3.0',
        data: {
          vehicles: [
            {
              vehicle_id: 'a',
              lat: 40.7,
              lon: -74,
              is_reserved: false,
              is_disabled: false,
              vehicle_type_id: 'e',
              current_range_meters: 9000,
            },
            {
              vehicle_id: 'b',
              lat: 40.7,
              lon: -74,
              is_reserved: true,
              is_disabled: false,
              vehicle_type_id: 'e',
            },
          ],
        },
      },
    });
    const s = system(`${srv.base}/v3/manifest.json`, { system_id: 'demo' });
    await s.start();
    expect(s.version).toBe('3.0');
    expect(s.name).toBe('Demo Bikes');
    expect(s.appLinks).toEqual({
      android: null,
      ios: 'https://apps.apple.com/app/id1',
      logo: 'https://example.org/logo.svg',
    });
    expect(s.vehicles()).toEqual([
      expect.objectContaining({ id: 'a', electric: true, currentRangeMeters: 9000 }),
    ]);
  });

  it('leaves out a failing feed and a slow one, and says why', async () => {
    srv.set('/bad/gbfs.json', {
      json: discovery(srv.base, 'bad', ['station_information', 'station_status'], '2.3'),
    });
    srv.set('/bad/station_information.json', { status: 500 });
    srv.set('/bad/station_status.json', { delayMs: 3000, json: { data: { stations: [] } } });
    const s = system(`${srv.base}/bad/gbfs.json`);
    await s.start();
    expect(s.stations()).toEqual([]);
    const h = s.health();
    expect(h.status).toBe('failing');
    const byName = Object.fromEntries(h.feeds.map((f) => [f.name, f]));
    expect(byName.station_information?.error).toBe('answered 500');
    expect(byName.station_status?.error).toMatch(/no answer within/);
    // An unreachable discovery file.
    const gone = system('http://127.0.0.1:9/gbfs.json');
    await gone.start();
    expect(gone.health()).toMatchObject({ status: 'failing', error: expect.stringMatching(/cannot reach/) });
  });

  it('refreshes each feed on its ttl and turns stale when refreshes keep failing', async () => {
    let clock = Date.now();
    srv.set('/ttl/gbfs.json', {
      json: discovery(srv.base, 'ttl', ['station_information', 'station_status']),
    });
    srv.set('/ttl/station_information.json', {
      json: {
        ttl: 1,
        last_updated: 1,
        data: { stations: [{ station_id: 'x', name: 'X', lat: 40.7, lon: -74 }] },
      },
    });
    srv.set('/ttl/station_status.json', {
      json: {
        ttl: 1,
        last_updated: 1,
        data: {
          stations: [
            {
              station_id: 'x',
              num_bikes_available: 3,
              num_docks_available: 2,
              is_installed: 1,
              is_renting: 1,
              is_returning: 1,
            },
          ],
        },
      },
    });
    const s = system(`${srv.base}/ttl/gbfs.json`, {}, () => clock);
    await s.start();
    expect(s.stations()[0]?.bikes).toBe(3);
    srv.set('/ttl/station_status.json', {
      json: {
        ttl: 1,
        last_updated: 2,
        data: { stations: [{ station_id: 'x', num_bikes_available: 7, num_docks_available: 0 }] },
      },
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(srv.hits.get('/ttl/station_status.json')).toBeGreaterThanOrEqual(2);
    expect(s.stations()[0]?.bikes).toBe(7);
    srv.set('/ttl/station_status.json', { status: 503 });
    clock += 181_000;
    expect(s.stations()).toEqual([]);
    expect(s.health().status).toBe('stale');
  });
});

describe('GET /health/ with bike-share systems', () => {
  it('lists each system and the state of its feeds', async () => {
    const config = testConfig({
      QUIETWAY_GBFS_SYSTEMS: JSON.stringify([
        { id: 'citibike', city: 'nyc', url: `${srv.base}/citibike/gbfs.json`, name: 'Citi Bike' },
        { id: 'broken', city: 'nyc', url: `${srv.base}/bad/gbfs.json` },
      ]),
      QUIETWAY_GBFS_TIMEOUT_MS: '1500',
    });
    const app = await buildApp({ config });
    await app.gbfs.ready();
    const body = (await app.inject({ url: '/health/' })).json();
    expect(body.status).toBe('ok');
    expect(body.bike_share).toEqual([
      expect.objectContaining({ id: 'citibike', name: 'Citi Bike', status: 'ok', version: '1.1' }),
      expect.objectContaining({ id: 'broken', status: 'failing', stations: 0 }),
    ]);
    expect(body.bike_share[0].stations).toBeGreaterThan(2000);
    await app.close();
  });

  it('refuses a bad system list at start-up', () => {
    expect(() => testConfig({ QUIETWAY_GBFS_SYSTEMS: '[{"id":"X Y","city":"nyc","url":"nope"}]' })).toThrow(
      /QUIETWAY_GBFS_SYSTEMS\.0\.(id|url)/,
    );
  });
});
