// POST /multi-modal/v2/ and the deprecated v1 on real extracts with the recorded Citi Bike (New York),
// Divvy (Chicago) and Bay Wheels (West Oakland) feeds served over real HTTP on 127.0.0.1.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { encodePolyline } from '../../server/src/routing/polyline.js';
import { departureIn, isNight } from '../../server/src/routing/time.js';
import {
  discovery,
  type GbfsTestServer,
  recorded,
  rewrittenDiscovery,
  startGbfsServer,
} from '../gbfs-server.js';
import { buildGraph, SHARED_DATA, tempDir, testConfig } from '../helpers.js';

interface Leg {
  mode: string;
  start_label?: string;
  end_label?: string;
  distance: number;
  duration: number;
  geometry: { type: string; coordinates: [number, number][] };
  steps: { mode: string; maneuver: { instruction: string } }[];
  reroutable?: boolean;
}
interface Option {
  name: string;
  bike_type: string;
  is_electric?: boolean;
  supersafe: boolean;
  nighttime: boolean;
  label: string | null;
  sublabel: string | null;
  legs: Leg[];
  rental?: {
    pricing: null | Record<string, number | string | null>;
    app_links: { android: string | null; ios: string | null; logo: string | null };
  };
  parking?: unknown;
  event?: unknown;
}

const graphs = tempDir('quietway-mm-graphs-');
const BAYS = path.join(graphs, 'london-ebike-bays.geojson');
let srv: GbfsTestServer;
const apps: FastifyInstance[] = [];

/** An app with the three cities' graphs and the given GBFS systems. */
async function appWith(systems: unknown[], cities?: string[], env: Record<string, string> = {}) {
  const config = testConfig({
    QUIETWAY_GBFS_SYSTEMS: JSON.stringify(systems),
    QUIETWAY_GBFS_TIMEOUT_MS: '2500',
    ...env,
  });
  const fs = await import('node:fs');
  fs.mkdirSync(config.graphDir, { recursive: true });
  for (const f of fs.readdirSync(graphs)) {
    if (
      (f.endsWith('.qwg') || f.endsWith('.places.ndjson')) &&
      (!cities || cities.includes(f.split('.')[0] ?? ''))
    )
      fs.copyFileSync(path.join(graphs, f), path.join(config.graphDir, f));
  }
  const app = await buildApp({ config });
  apps.push(app);
  await app.gbfs.ready();
  const key = issueKey(app.repos, { kind: 'app', name: 'test', source: null, legacyV1: false }).key;
  const legacy = issueKey(app.repos, { kind: 'app', name: 'old', source: null, legacyV1: true }).key;
  const post = (payload: unknown, url = '/multi-modal/v2/', k = key) =>
    app.inject({ method: 'POST', url, headers: { apikey: k }, payload: payload as object });
  return { app, post, legacy };
}

let main: Awaited<ReturnType<typeof appWith>>;
const citibike = () => ({
  id: 'citibike',
  city: 'nyc',
  url: `${srv.base}/citibike/gbfs.json`,
  name: 'Citi Bike',
});
const divvy = (prefix = 'divvy') => ({ id: prefix, city: 'chicago', url: `${srv.base}/${prefix}/gbfs.json` });
const baywheels = () => ({ id: 'baywheels', city: 'sf-bay-area', url: `${srv.base}/baywheels/gbfs.json` });

beforeAll(async () => {
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], graphs, 25);
  buildGraph('chicago', [path.join(SHARED_DATA, 'osm/chicago-loop.osm.pbf')], graphs, 25);
  buildGraph('sf-bay-area', [path.join(SHARED_DATA, 'osm/west-oakland.osm.bz2')], graphs, 25);
  buildGraph('london', [path.join(SHARED_DATA, 'osm/london-clerkenwell.osm.pbf')], graphs, 25);
  // Hand-written e-bike bays (no bay data is recorded): one Forest bay by St Paul's (City of
  // London), Lime bays in Islington and Camden.
  const fs = await import('node:fs');
  fs.writeFileSync(
    BAYS,
    JSON.stringify({
      type: 'FeatureCollection',
      features: [
        { name: 'St Paul’s bay', operator: 'forest', at: [-0.0972, 51.515] },
        { name: 'Clerkenwell Road bay', operator: 'lime', at: [-0.102, 51.5245] },
        { name: 'Hatton Garden bay', operator: 'lime', at: [-0.11, 51.518] },
      ].map((b) => ({
        type: 'Feature',
        geometry: { type: 'Point', coordinates: b.at },
        properties: { name: b.name, operator: b.operator },
      })),
    }),
  );
  srv = await startGbfsServer({
    ...recorded('citibike-nyc-2024-10-02', 'citibike'),
    ...recorded('divvy-chicago-2025-01-29', 'divvy'),
    ...recorded('baywheels-sf-2023-07-19', 'baywheels'),
  });
  // The Citi Bike and Bay Wheels recordings have no discovery file: one lists what was recorded.
  srv.set('/citibike/gbfs.json', {
    json: discovery(srv.base, 'citibike', ['station_information', 'station_status'], '1.1'),
  });
  srv.set('/baywheels/gbfs.json', {
    json: discovery(
      srv.base,
      'baywheels',
      ['system_information', 'station_information', 'station_status'],
      '1.1',
    ),
  });
  srv.set('/divvy/gbfs.json', { json: rewrittenDiscovery('divvy-chicago-2025-01-29', srv.base, 'divvy') });
  srv.set('/broken/gbfs.json', {
    json: discovery(srv.base, 'broken', ['station_information', 'station_status']),
  });
  srv.set('/broken/station_information.json', { status: 500 });
  srv.set('/broken/station_status.json', { delayMs: 5000, json: {} });
  main = await appWith(
    [
      citibike(),
      divvy(),
      baywheels(),
      { id: 'broken', city: 'nyc', url: `${srv.base}/broken/gbfs.json`, name: 'Broken Bikes' },
    ],
    undefined,
    {
      QUIETWAY_PARKING: JSON.stringify({
        london: {
          ebike_bays: [BAYS],
          ebike_bay_areas: ['City of London', 'Islington'],
          ebike_operators: { lime: ['Islington', 'Camden'], forest: ['City of London', 'Islington'] },
        },
      }),
    },
  );
}, 120_000);
afterAll(async () => {
  for (const a of apps) await a.close();
  await srv.close();
});

// Battery Park to City Hall, about 1.3 km as the crow flies.
const NYC_A: [number, number] = [-74.015, 40.704];
const NYC_B: [number, number] = [-74.004, 40.712];
// Chicago Loop: State & Jackson to near Millennium Park north-east.
const CHI_A: [number, number] = [-87.6298, 41.8781];
const CHI_B: [number, number] = [-87.62, 41.888];

const summary = (o: Option[]) =>
  o.map((x) => `${x.bike_type}${x.is_electric ? '+e' : ''}:${x.label ?? x.name}`);
const total = (o: Option) => o.legs.reduce((a, l) => a + l.duration, 0);
const last = <T>(a: T[]) => a[a.length - 1] as T;

function checkLegs(o: Option) {
  const legs = o.legs;
  expect(last(legs).end_label).toBe('End');
  for (const l of legs) {
    expect(l.geometry.type).toBe('LineString');
    expect(l.steps.length).toBeGreaterThan(0);
    for (const s of l.steps) expect(s.mode).toBe(l.mode);
    expect(last(l.steps).maneuver.instruction).toBe('Arrive at destination');
  }
  // Legs join up at the station or bike: walking and riding snap it to the nearest footway and the
  // nearest rideable road, which may lie a few tens of metres apart.
  for (let i = 1; i < legs.length; i++) {
    const a = last((legs[i - 1] as Leg).geometry.coordinates);
    const b = (legs[i] as Leg).geometry.coordinates[0] as [number, number];
    expect(Math.hypot((a[0] - b[0]) * 84_000, (a[1] - b[1]) * 111_195)).toBeLessThan(80);
  }
}

describe('POST /multi-modal/v2/', () => {
  it('New York by day: Personal SuperSafe and Direct, then Citi Bike docked and docked e-bike', async () => {
    const res = await main.post({ origin: NYC_A, destination: NYC_B, departure_time: '2026-11-23T12:00' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.search_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.destination_parking).toBeNull();
    const options = body.options as Option[];
    expect(summary(options)).toEqual([
      'Personal:SuperSafe™',
      'Personal:Direct',
      'Docked:Citi Bike',
      'Docked+e:Citi Bike',
    ]);
    const [safe, direct, docked, ebike] = options as [Option, Option, Option, Option];
    expect(safe).toMatchObject({ supersafe: true, nighttime: false, sublabel: null, bike_type: 'Personal' });
    expect(direct.supersafe).toBe(false);
    expect(safe.rental).toBeUndefined();
    expect(safe.legs.map((l) => l.mode)).toEqual(['cycling']);
    for (const o of options) checkLegs(o);
    // Docked: walk to a station with bikes, ride, walk from a station with docks; live counts.
    expect(docked.legs.map((l) => l.mode)).toEqual(['walking', 'cycling', 'walking']);
    expect(docked.label).toBeNull();
    expect(docked.is_electric).toBeUndefined();
    expect(docked.supersafe).toBe(true);
    expect(docked.legs[0]?.end_label).toMatch(/^\d+ bikes?$/);
    expect(docked.legs[1]?.end_label).toMatch(/^\d+ docks?$/);
    expect(ebike.is_electric).toBe(true);
    expect(ebike.legs[0]?.end_label).toMatch(/^\d+ e-bikes?$/);
    // Speeds: walking 5 km/h, cycling 15 km/h at most, e-bike 22 km/h.
    const [w, ride] = docked.legs as [Leg, Leg];
    expect(w.duration).toBeCloseTo(w.distance / (5 / 3.6), -1);
    expect(ride.distance / ride.duration).toBeLessThanOrEqual(15 / 3.6 + 0.01);
    const eride = ebike.legs[1] as Leg;
    expect(eride.distance / eride.duration).toBeGreaterThan(15 / 3.6);
    expect(eride.distance / eride.duration).toBeLessThanOrEqual(22 / 3.6 + 0.01);
    // Citi Bike's recording has no pricing or system_information: pricing null, the stations' app links.
    expect(docked.rental).toEqual({
      pricing: null,
      app_links: {
        android: 'https://bkn.lft.to/lastmile_qr_scan',
        ios: 'https://bkn.lft.to/lastmile_qr_scan',
        logo: null,
      },
    });
    // The failing system is left out; the trip still answers.
    expect(options.some((o) => o.name === 'Broken Bikes')).toBe(false);
  });

  it('chooses stations by walking cost, within 1,500 m, with the live counts it shows', async () => {
    const body = (await main.post({ origin: NYC_A, destination: NYC_B })).json();
    const docked = (body.options as Option[]).find(
      (o) => o.bike_type === 'Docked' && !o.is_electric,
    ) as Option;
    const pick = last((docked.legs[0] as Leg).geometry.coordinates);
    const drop = (docked.legs[2] as Leg).geometry.coordinates[0] as [number, number];
    const fs = await import('node:fs');
    const info = JSON.parse(
      fs.readFileSync(
        path.join(SHARED_DATA, 'gbfs/citibike-nyc-2024-10-02/station_information.json'),
        'utf8',
      ),
    ).data.stations as { lon: number; lat: number; station_id: string }[];
    const m = (a: [number, number], b: [number, number]) =>
      Math.hypot((a[0] - b[0]) * 84_300, (a[1] - b[1]) * 111_195);
    const nearestStation = (p: [number, number]) =>
      info.reduce((x, y) => (m([x.lon, x.lat], p) <= m([y.lon, y.lat], p) ? x : y));
    const ps = nearestStation(pick);
    const ds = nearestStation(drop);
    expect(m([ps.lon, ps.lat], NYC_A)).toBeLessThanOrEqual(1500);
    expect(m([ds.lon, ds.lat], NYC_B)).toBeLessThanOrEqual(1500);
    const status = JSON.parse(
      fs.readFileSync(path.join(SHARED_DATA, 'gbfs/citibike-nyc-2024-10-02/station_status.json'), 'utf8'),
    ).data.stations as {
      station_id: string;
      num_bikes_available: number;
      num_ebikes_available: number;
      num_docks_available: number;
    }[];
    const sp = status.find((s) => s.station_id === ps.station_id);
    const sd = status.find((s) => s.station_id === ds.station_id);
    expect(docked.legs[0]?.end_label).toBe(
      `${(sp?.num_bikes_available ?? 0) - (sp?.num_ebikes_available ?? 0)} bikes`,
    );
    expect(docked.legs[1]?.end_label).toBe(`${sd?.num_docks_available} docks`);
  });

  it('New York at night: SuperSafe™ Night, Direct · Night and the standard SuperSafe™', async () => {
    const options = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: '2026-11-23T22:00' })
    ).json().options as Option[];
    const personal = options.filter((o) => o.bike_type === 'Personal');
    expect(personal.map((o) => [o.label, o.sublabel, o.supersafe, o.nighttime])).toEqual([
      ['SuperSafe™ Night', 'Prefers well-lit roads', true, true],
      ['Direct · Night', 'Prefers well-lit roads', false, true],
      ['SuperSafe™', null, true, false],
    ]);
    for (const o of options.filter((x) => x.bike_type !== 'Personal')) expect(o.nighttime).toBe(true);
    // The lighting override turns the fan-out off.
    const day = (
      await main.post({
        origin: NYC_A,
        destination: NYC_B,
        departure_time: '2026-11-23T22:00',
        nighttime: false,
      })
    ).json().options as Option[];
    expect(day.filter((o) => o.bike_type === 'Personal').map((o) => o.label)).toEqual([
      'SuperSafe™',
      'Direct',
    ]);
  });

  it('fans out for a ride that starts in daylight and finishes after dark', async () => {
    // The last minute before night begins on 2026-11-23 in New York, less five: the ride (about ten
    // minutes) ends after dark.
    let minute = 16 * 60;
    const at = (m: number) =>
      `2026-11-23T${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    while (!isNight(departureIn(at(minute), 'America/New_York'), NYC_B[0], NYC_B[1])) minute++;
    const options = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: at(minute - 5) })
    ).json().options as Option[];
    expect(options.filter((o) => o.bike_type === 'Personal').map((o) => o.label)).toEqual([
      'SuperSafe™ Night',
      'Direct · Night',
      'SuperSafe™',
    ]);
    // Bike-share options ride the regime at departure: still day.
    expect(options.filter((o) => o.bike_type !== 'Personal').every((o) => !o.nighttime)).toBe(true);
    const early = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: at(minute - 60) })
    ).json().options as Option[];
    expect(early.filter((o) => o.bike_type === 'Personal').map((o) => o.label)).toEqual([
      'SuperSafe™',
      'Direct',
    ]);
  });

  it('Chicago with Divvy: docked, docked e-bike and dockless with prices for the trip', async () => {
    const options = (
      await main.post({ origin: CHI_A, destination: CHI_B, departure_time: '2026-11-23T12:00' })
    ).json().options as Option[];
    expect(summary(options)).toEqual([
      'Personal:SuperSafe™',
      'Personal:Direct',
      'Docked:Divvy',
      'Docked+e:Divvy',
      'Dockless+e:Divvy',
    ]);
    for (const o of options) checkLegs(o);
    // Chicago has no lighting data: never night.
    const night = (
      await main.post({ origin: CHI_A, destination: CHI_B, departure_time: '2026-11-23T23:00' })
    ).json().options as Option[];
    expect(night.every((o) => o.nighttime === false && o.sublabel === null)).toBe(true);
    const [, , docked, ebike, dockless] = options as [Option, Option, Option, Option, Option];
    // BIKE SINGLE RIDE: $1.00 unlock, $0.18 per started minute of the ride.
    const rideMin = (o: Option) => (o.legs[1] as Leg).duration / 60;
    expect(docked.rental?.pricing).toEqual({
      currency: 'USD',
      unlock_fee: 1,
      per_min_rate: 0.18,
      per_min_interval: 1,
      per_km_rate: null,
      per_km_interval: null,
      description: '$1.00 unlock fee, $0.18 per minute.',
      estimated_cost: Math.round((1 + 0.18 * Math.ceil(rideMin(docked))) * 100) / 100,
    });
    expect(ebike.rental?.pricing?.per_min_rate).toBe(0.44);
    expect(ebike.rental?.pricing?.estimated_cost).toBe(
      Math.round((1 + 0.44 * Math.ceil(rideMin(ebike))) * 100) / 100,
    );
    // Dockless: walk to the nearest e-bike, ride to the door.
    expect(dockless.legs.map((l) => [l.mode, l.end_label])).toEqual([
      ['walking', 'Pick up bike'],
      ['cycling', 'End'],
    ]);
    expect(last((dockless.legs[1] as Leg).geometry.coordinates)[1]).toBeCloseTo(CHI_B[1], 2);
    expect(dockless.rental?.pricing?.description).toBe('$1.00 unlock fee, $0.44 per minute.');
    expect(dockless.rental?.app_links.ios).toBe('https://chi.lft.to/lastmile_qr_scan');
  });

  it('Bay Wheels in West Oakland: docked between the BART station and Mandela Parkway', async () => {
    const options = (
      await main.post({
        origin: [-122.2952, 37.8043],
        destination: [-122.2905, 37.8118],
        departure_time: '2026-11-23T12:00',
      })
    ).json().options as Option[];
    const docked = options.find((o) => o.bike_type === 'Docked') as Option;
    expect(docked.name).toBe('Bay Wheels');
    expect(docked.legs[0]?.end_label).toMatch(/^\d+ bikes$/);
    // No e-bikes at either station in the recording: no docked e-bike option.
    expect(options.some((o) => o.is_electric)).toBe(false);
  });

  it('drops alternatives more than 3 × slower than the personal bike', async () => {
    // By day (after dark the Night fan-out adds Personal options of its own).
    const short = (
      await main.post({ origin: [-74.0089, 40.70797], destination: [-74.0082, 40.7095], nighttime: false })
    ).json().options as Option[];
    expect(short.map((o) => o.bike_type)).toEqual(['Personal']);
    const options = (await main.post({ origin: NYC_A, destination: NYC_B })).json().options as Option[];
    const personal = total(options[0] as Option);
    for (const o of options) expect(total(o)).toBeLessThanOrEqual(3 * personal);
  });

  it('lists disruptions near an option’s cycling legs', async () => {
    const options = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: '2027-01-05T12:00' })
    ).json().options as Option[];
    const ride = (options[0] as Option).legs[0] as Leg;
    const mid = ride.geometry.coordinates[Math.floor(ride.geometry.coordinates.length / 2)] as [
      number,
      number,
    ];
    const d = main.app.repos.disruptions.create({
      source: 'curator',
      city: 'nyc',
      name: 'Works',
      notes: 'Lane closed',
      severity: 'avoid',
      location: mid,
      startDate: '2027-01-05',
      startMinute: 600,
      endDate: '2027-01-05',
      endMinute: 900,
    });
    const again = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: '2027-01-05T12:00' })
    ).json().options as (Option & { disruptions?: { id: string; status: string }[] })[];
    expect(again[0]?.disruptions).toEqual([expect.objectContaining({ id: d.id, status: 'active' })]);
    // Another day: none, and the member is absent.
    const other = (
      await main.post({ origin: NYC_A, destination: NYC_B, departure_time: '2027-01-06T12:00' })
    ).json().options as Option[];
    expect(other.every((o) => !('disruptions' in o))).toBe(true);
  });

  it('answers an empty options array when nothing is viable', async () => {
    // Inside New York's coverage (Staten Island) but far beyond the loaded extract.
    const res = await main.post({ origin: [-74.15, 40.58], destination: [-74.14, 40.59] });
    expect(res.statusCode).toBe(200);
    expect(res.json().options).toEqual([]);
  });

  it('validates like directions', async () => {
    const bad = async (payload: unknown, re: RegExp) => {
      const res = await main.post(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(re);
    };
    await bad({ destination: NYC_B }, /origin/);
    await bad({ origin: [200, 40], destination: NYC_B }, /longitude/);
    await bad({ origin: NYC_A, destination: NYC_B, departure_time: '2026-13-01T10:00' }, /departure_time/);
    await bad({ origin: NYC_A, destination: NYC_B, parking_type: 'car' }, /parking_type/);
    await bad({ origin: NYC_A, destination: NYC_B, custom_route_id: 'x' }, /custom_route_id/);
    const cross = await main.post({ origin: NYC_A, destination: CHI_B });
    expect(cross.statusCode).toBe(400);
    expect(cross.json().code).toBe('CROSS_CITY_ROUTE');
    const get = await main.app.inject({ method: 'GET', url: '/multi-modal/v2/' });
    expect(get.statusCode).toBe(405);
  });
});

describe('parking at the destination', () => {
  // Clerkenwell Green (Islington), St Paul's (City of London), Gray's Inn Road (Camden).
  const ISLINGTON: [number, number] = [-0.1053, 51.5233];
  const ST_PAULS: [number, number] = [-0.0985, 51.5138];
  const CAMDEN: [number, number] = [-0.118, 51.52];
  const personal = (o: Option[]) => o.filter((x) => x.bike_type === 'Personal');

  it('regular: rides to the nearest rack of Chicago’s rack table and walks the rest', async () => {
    const plain = (await main.post({ origin: CHI_A, destination: CHI_B })).json();
    const body = (await main.post({ origin: CHI_A, destination: CHI_B, parking_type: 'regular' })).json();
    expect(body.destination_parking).toEqual({
      parking_type: 'regular',
      status: 'spot',
      covered: true,
      area: expect.any(String),
      operator: null,
    });
    for (const o of personal(body.options)) {
      expect(o.legs.map((l) => [l.mode, l.end_label])).toEqual([
        ['cycling', 'Park bike'],
        ['walking', 'End'],
      ]);
      expect(o.parking).toMatchObject({ type: 'regular', source: 'chicago-bike-racks.csv' });
      const spot = (o.parking as { location: [number, number] }).location;
      expect(Math.hypot((spot[0] - CHI_B[0]) * 83_000, (spot[1] - CHI_B[1]) * 111_195)).toBeLessThanOrEqual(
        1500,
      );
    }
    // Other option types are unaffected.
    const others = (x: Option[]) => x.filter((o) => o.bike_type !== 'Personal').map((o) => o.legs.length);
    expect(others(body.options)).toEqual(others(plain.options));
  });

  it('regular: OSM bicycle parking from the place index (New York)', async () => {
    const body = (await main.post({ origin: NYC_A, destination: NYC_B, parking_type: 'regular' })).json();
    expect(body.destination_parking.status).toBe('spot');
    expect(personal(body.options)[0]?.parking).toMatchObject({ source: 'osm', name: 'The Wall Street' });
  });

  it('regular: no rack within 1,500 m leaves the ride direct with parking null', async () => {
    const body = (
      await main.post({
        origin: [-122.2952, 37.8043],
        destination: [-122.2905, 37.8118],
        parking_type: 'regular',
      })
    ).json();
    expect(body.destination_parking).toMatchObject({ parking_type: 'regular', status: 'not_found' });
    for (const o of personal(body.options)) {
      expect(o.parking).toBeNull();
      expect(o.legs.map((l) => l.end_label)).toEqual(['End']);
    }
  });

  it('ebike: a borough that mandates bays ends the ride at the nearest bay', async () => {
    const body = (
      await main.post({ origin: ISLINGTON, destination: ST_PAULS, parking_type: 'ebike' })
    ).json();
    expect(body.destination_parking).toEqual({
      parking_type: 'ebike',
      status: 'spot',
      covered: true,
      area: 'City of London',
      operator: null,
    });
    const o = personal(body.options)[0] as Option;
    expect(o.parking).toMatchObject({ type: 'ebike', name: 'St Paul’s bay', area: 'City of London' });
    expect(o.legs.map((l) => l.end_label)).toEqual(['Park bike', 'End']);
  });

  it('ebike: a borough without a bay rule means park anywhere', async () => {
    const body = (await main.post({ origin: ISLINGTON, destination: CAMDEN, parking_type: 'ebike' })).json();
    expect(body.destination_parking).toMatchObject({
      status: 'park_anywhere',
      covered: true,
      area: 'Camden',
    });
    for (const o of personal(body.options)) {
      expect(o.parking).toBeNull();
      expect(o.legs).toHaveLength(1);
    }
  });

  it('ebike with an operator: its own bays only; outside its boroughs, its nearest bay and a walk', async () => {
    const forest = (
      await main.post({
        origin: ISLINGTON,
        destination: ST_PAULS,
        parking_type: 'ebike',
        ebike_operator: 'forest',
      })
    ).json();
    expect(forest.destination_parking).toMatchObject({ status: 'spot', covered: true, operator: 'forest' });
    expect(personal(forest.options)[0]?.parking).toMatchObject({ operator: 'forest' });
    const lime = (
      await main.post({
        origin: ISLINGTON,
        destination: ST_PAULS,
        parking_type: 'ebike',
        ebike_operator: 'lime',
      })
    ).json();
    expect(lime.destination_parking).toEqual({
      parking_type: 'ebike',
      status: 'outside_operator_area',
      covered: false,
      area: 'City of London',
      operator: 'lime',
    });
    const o = personal(lime.options)[0] as Option;
    expect(o.parking).toMatchObject({
      operator: 'lime',
      area: expect.stringMatching(/^(Islington|Camden)$/),
    });
    expect(o.legs.map((l) => [l.mode, l.end_label])).toEqual([
      ['cycling', 'Park bike'],
      ['walking', 'End'],
    ]);
  });
});

describe('a saved custom route (an event route)', () => {
  // Along the Hudson River Greenway from Battery Park to Battery Park City, inside the extract.
  const STOPS: [number, number][] = [
    [-74.017, 40.7045],
    [-74.0168, 40.7085],
    [-74.0155, 40.7115],
  ];
  let owner: string;
  let eventId: number;
  let routeId: string;
  const as = (token: string, method: 'POST' | 'GET', url: string, payload?: unknown) =>
    main.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      payload: payload as object,
    });
  const signUp = async (email: string) =>
    (
      await main.app.inject({
        method: 'POST',
        url: '/auth/v1/signup',
        payload: { email, password: 'long enough pw', name: email.split('@')[0] },
      })
    ).json().access_token as string;

  beforeAll(async () => {
    owner = await signUp('owner@example.org');
    const e = await as(owner, 'POST', '/api/admin/events/', {
      name: 'Greenway Sunday Ride',
      is_leisure_route: true,
      route: { distance: 1500, duration: 360, polyline: encodePolyline(STOPS) },
    });
    expect(e.json()).toMatchObject({ name: 'Greenway Sunday Ride' });
    eventId = e.json().id;
  });

  it('is saved by the event’s creator as ordered stops; others may not', async () => {
    const res = await as(owner, 'POST', `/api/admin/events/${eventId}/custom-routes/`, { stops: STOPS });
    expect(res.statusCode).toBe(201);
    routeId = res.json().id;
    expect(res.json()).toMatchObject({ event_id: eventId, name: 'Greenway Sunday Ride', stops: STOPS });
    const other = await signUp('other@example.org');
    expect(
      (await as(other, 'POST', `/api/admin/events/${eventId}/custom-routes/`, { stops: STOPS })).statusCode,
    ).toBe(403);
    expect(
      (await as(owner, 'POST', `/api/admin/events/${eventId}/custom-routes/`, { stops: [STOPS[0]] }))
        .statusCode,
    ).toBe(400);
    expect(
      (await as(owner, 'POST', '/api/admin/events/999999/custom-routes/', { stops: STOPS })).statusCode,
    ).toBe(404);
    const list = (await as(owner, 'GET', `/api/admin/events/${eventId}/custom-routes/`)).json();
    expect(list.custom_routes.map((r: { id: string }) => r.id)).toEqual([routeId]);
  });

  it('is appended to every option as non-reroutable legs with the event’s details; parking is ignored', async () => {
    const body = (
      await main.post({
        origin: [-74.0089, 40.70797],
        destination: STOPS[0],
        custom_route_id: routeId,
        parking_type: 'regular',
      })
    ).json();
    expect(body.destination_parking).toBeNull();
    const options = body.options as Option[];
    expect(options.map((o) => o.bike_type)).toContain('Docked');
    for (const o of options) {
      checkLegs(o);
      expect(o.event).toMatchObject({ id: eventId, name: 'Greenway Sunday Ride', is_leisure_route: true });
      expect(o.parking).toBeUndefined();
      const fixed = o.legs.filter((l) => l.reroutable === false);
      // One leg per pair of stops, cycling, the first one labelled with the route's name.
      expect(fixed).toHaveLength(STOPS.length - 1);
      expect(fixed.every((l) => l.mode === 'cycling')).toBe(true);
      expect(fixed[0]?.start_label).toBe('Greenway Sunday Ride');
      const before = o.legs[o.legs.indexOf(fixed[0] as Leg) - 1] as Leg;
      expect(before.end_label).toBeUndefined();
      // Other legs carry no reroutable member at all.
      for (const l of o.legs.filter((x) => !fixed.includes(x))) expect('reroutable' in l).toBe(false);
    }
    const personal = options[0] as Option;
    expect(personal.legs.map((l) => [l.mode, l.reroutable ?? true, l.end_label ?? null])).toEqual([
      ['cycling', true, null],
      ['cycling', false, null],
      ['cycling', false, 'End'],
    ]);
    // Docked: the bike is docked near the route's last stop, then a walk to it.
    const docked = options.find((o) => o.bike_type === 'Docked') as Option;
    expect(last(docked.legs).mode).toBe('walking');
    const end = last(last(docked.legs).geometry.coordinates);
    expect(Math.hypot((end[0] - -74.0155) * 84_000, (end[1] - 40.7115) * 111_195)).toBeLessThan(80);
  });

  it('an id that does not resolve plans the plain trip', async () => {
    const body = (
      await main.post({
        origin: NYC_A,
        destination: NYC_B,
        custom_route_id: '00000000-0000-4000-8000-000000000000',
      })
    ).json();
    expect((body.options as Option[]).every((o) => o.event === undefined)).toBe(true);
  });
});

describe('POST /multi-modal/ (deprecated v1)', () => {
  it('answers legacy keys with the same options and deprecation headers', async () => {
    const res = await main.post({ origin: CHI_A, destination: CHI_B }, '/multi-modal/', main.legacy);
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBeDefined();
    expect(res.headers.link).toContain('/multi-modal/v2/');
    expect((res.json().options as Option[]).length).toBeGreaterThan(2);
    const closed = await main.post({ origin: CHI_A, destination: CHI_B }, '/multi-modal/');
    expect(closed.statusCode).toBe(403);
  });
});

describe('e-bike range and outages', () => {
  it('passes over an e-bike whose remaining range cannot finish the ride', async () => {
    const near: [number, number] = [-87.629, 41.8785];
    const far: [number, number] = [-87.633, 41.88];
    for (const [p, what] of Object.entries(recorded('divvy-chicago-2025-01-29', 'range'))) srv.set(p, what);
    srv.set('/range/gbfs.json', {
      json: discovery(srv.base, 'range', [
        'system_information',
        'vehicle_types',
        'free_bike_status',
        'system_pricing_plans',
      ]),
    });
    const bike = (id: string, at: [number, number], range: number) => ({
      bike_id: id,
      lon: at[0],
      lat: at[1],
      is_reserved: 0,
      is_disabled: 0,
      vehicle_type_id: '2',
      current_range_meters: range,
    });
    srv.set('/range/free_bike_status.json', {
      json: {
        last_updated: 1738144059,
        ttl: 60,
        version: '2.3',
        // The near bike covers the straight line (1.4 km) but not the ride on the streets.
        data: { bikes: [bike('near', near, 1500), bike('far', far, 40_000)] },
      },
    });
    const { post } = await appWith([divvy('range')], ['chicago']);
    const options = (await post({ origin: CHI_A, destination: CHI_B })).json().options as Option[];
    const dockless = options.find((o) => o.bike_type === 'Dockless') as Option;
    expect(dockless.is_electric).toBe(true);
    const pick = last((dockless.legs[0] as Leg).geometry.coordinates);
    const m = (a: [number, number], b: [number, number]) =>
      Math.hypot((a[0] - b[0]) * 83_000, (a[1] - b[1]) * 111_195);
    expect(m(pick, far)).toBeLessThan(m(pick, near));
    expect((dockless.legs[1] as Leg).distance).toBeGreaterThan(1500);
    // A trip in a configured city whose graph is not loaded here (New York): a routing outage.
    const outage = await post({ origin: NYC_A, destination: NYC_B });
    expect(outage.statusCode).toBe(503);
    expect(outage.json().error).toMatch(/not available/);
  });
});

describe('geofencing', () => {
  const square = (c: [number, number], r: number): [number, number][][] => [
    [
      [c[0] - r, c[1] - r],
      [c[0] + r, c[1] - r],
      [c[0] + r, c[1] + r],
      [c[0] - r, c[1] + r],
      [c[0] - r, c[1] - r],
    ],
  ];
  const zoned = async (
    prefix: string,
    zones: { polygon: [number, number][][]; rule: Record<string, unknown> }[],
  ) => {
    const feeds = [
      'system_information',
      'vehicle_types',
      'station_information',
      'station_status',
      'free_bike_status',
      'system_pricing_plans',
    ];
    const routes = recorded('divvy-chicago-2025-01-29', prefix);
    for (const [p, what] of Object.entries(routes)) srv.set(p, what);
    srv.set(`/${prefix}/gbfs.json`, { json: discovery(srv.base, prefix, [...feeds, 'geofencing_zones']) });
    srv.set(`/${prefix}/geofencing_zones.json`, {
      json: {
        last_updated: 1738144058,
        ttl: 60,
        version: '2.3',
        data: {
          geofencing_zones: {
            type: 'FeatureCollection',
            features: zones.map((z, i) => ({
              type: 'Feature',
              geometry: { type: 'Polygon', coordinates: z.polygon },
              properties: { name: `zone ${i}`, rules: [z.rule] },
            })),
          },
        },
      },
    });
    return appWith([divvy(prefix)], ['chicago']);
  };
  const inside = (p: [number, number], poly: [number, number][][]) => {
    const ring = poly[0] as [number, number][];
    const xs = ring.map((q) => q[0]);
    const ys = ring.map((q) => q[1]);
    return (
      p[0] > Math.min(...xs) && p[0] < Math.max(...xs) && p[1] > Math.min(...ys) && p[1] < Math.max(...ys)
    );
  };

  it('never picks a bike in a no-ride zone, and keeps rides out of zones they may not cross', async () => {
    const plain = (await main.post({ origin: CHI_A, destination: CHI_B })).json().options as Option[];
    const dockless = plain.find((o) => o.bike_type === 'Dockless') as Option;
    const bike = last((dockless.legs[0] as Leg).geometry.coordinates);
    const noRide = square(bike, 0.0012);
    const app = await zoned('zone1', [
      { polygon: noRide, rule: { ride_allowed: false, ride_through_allowed: false } },
    ]);
    const options = (await app.post({ origin: CHI_A, destination: CHI_B })).json().options as Option[];
    expect(options.length).toBeGreaterThan(2);
    for (const o of options.filter((x) => x.bike_type !== 'Personal')) {
      for (const l of o.legs.filter((x) => x.mode === 'cycling')) {
        for (const p of l.geometry.coordinates) expect(inside(p, noRide)).toBe(false);
      }
    }
    // Another bike, outside the zone, is chosen.
    const moved = options.find((o) => o.bike_type === 'Dockless') as Option;
    expect(inside(last((moved.legs[0] as Leg).geometry.coordinates), noRide)).toBe(false);
  });

  it('leaves dockless out when the destination is a no-parking zone; docked stations outside still work', async () => {
    const noParking = square(CHI_B, 0.0008);
    const app = await zoned('zone2', [
      { polygon: noParking, rule: { ride_allowed: false, ride_through_allowed: true } },
    ]);
    const options = (await app.post({ origin: CHI_A, destination: CHI_B })).json().options as Option[];
    expect(options.some((o) => o.bike_type === 'Dockless')).toBe(false);
    const docked = options.find((o) => o.bike_type === 'Docked') as Option;
    expect(inside((docked.legs[2] as Leg).geometry.coordinates[0] as [number, number], noParking)).toBe(
      false,
    );
  });

  it('a zone closed to a vehicle type only binds that type', async () => {
    const everywhere = square(CHI_A, 0.05);
    // Scooters (type 3) may not ride here; bicycles may.
    const app = await zoned('zone3', [
      {
        polygon: everywhere,
        rule: { vehicle_type_ids: ['3'], ride_allowed: false, ride_through_allowed: false },
      },
    ]);
    const options = (await app.post({ origin: CHI_A, destination: CHI_B })).json().options as Option[];
    expect(options.some((o) => o.bike_type === 'Dockless')).toBe(true);
  });
});
