// The map pages in headless Chromium (Debian `chromium`, driven by playwright-core) against a server
// with a real NYC graph (Lower Manhattan): the safety map draws the graph's roads by class, shows a
// disruption in force and a road's details on click; the route planner signs a rider in, takes two
// clicked points, shows SuperSafe and Direct with their step lists, the explanation sentence and, with
// the recorded Citi Bike feed served on 127.0.0.1, a docked bike-share option with its walk, ride and
// walk legs drawn on the map; it zooms to a step, finds a place by keyboard and downloads a GPX. No
// request may leave 127.0.0.1. Screenshots of both pages at desktop
// and phone sizes are written to build/screenshots/ (ignored by git; the list is in the README).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { PROJECT_ROOT } from '../../server/src/config.js';
import { todayLocal } from '../../server/src/reports/changes.js';
import { describeWindow } from '../../server/src/reports/safety-map.js';
import { ensureChromium } from '../chromium.js';
import { discovery, type GbfsTestServer, recorded, startGbfsServer } from '../gbfs-server.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

const SHOTS = path.join(PROJECT_ROOT, 'build', 'screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** Around City Hall Park and the Financial District: streets on every side. */
const VIEW = '#16/40.7115/-74.0075';
const RIDER = { email: 'rider@example.org', password: 'long enough pw', name: 'Rosa' };
const ADMIN = { email: 'admin@example.org', password: 'long enough pw', name: 'Ada' };
let windowStreet: { name: string; wayId: number; at: [number, number] };
/** A straight quiet stretch ridden both ways: SuperSafe and Direct between two points on it are one route. */
let quietStretch: [number, number][];

let app: FastifyInstance;
let gbfs: GbfsTestServer;
let browser: Browser;
let base: string;
let executablePath: string;
const disruption = { name: 'Ann Street', notes: 'Water main works, one lane closed' };
let pin: [number, number];
/** Every request any page made that left 127.0.0.1 (http, https, ws) or used another scheme. */
const outside: string[] = [];
/** Every request seen (tiles come from MapLibre's worker: seeing them shows worker traffic is watched). */
const seen: string[] = [];

async function context(viewport: { width: number; height: number }): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport, acceptDownloads: true });
  ctx.on('request', (r) => {
    seen.push(r.url());
    const u = new URL(r.url());
    const local = ['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) && u.hostname === '127.0.0.1';
    // A GPX download is a blob: of the page's own making; nothing else is expected.
    if (!local && u.protocol !== 'blob:') outside.push(r.url());
  });
  return ctx;
}

/** Waits until the map has its style and every visible tile. */
async function mapSettled(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const m = (globalThis as unknown as { quietwayMap?: { loaded(): boolean; areTilesLoaded(): boolean } })
        .quietwayMap;
      return !!m && m.loaded() && m.areTilesLoaded();
    },
    null,
    { timeout: 60_000 },
  );
}

const rendered = (page: Page, layer: string) =>
  page.evaluate(
    (l) =>
      (
        globalThis as unknown as {
          quietwayMap: { queryRenderedFeatures(o: { layers: string[] }): unknown[] };
        }
      ).quietwayMap.queryRenderedFeatures({ layers: [l] }).length,
    layer,
  );

/** The page position of a longitude/latitude on the map. */
async function pointOf(page: Page, at: [number, number]): Promise<{ x: number; y: number }> {
  const box = await page.locator('#map').boundingBox();
  if (!box) throw new Error('no map');
  const p = await page.evaluate(
    (a) =>
      (
        globalThis as unknown as { quietwayMap: { project(a: [number, number]): { x: number; y: number } } }
      ).quietwayMap.project(a),
    at,
  );
  return { x: box.x + p.x, y: box.y + p.y };
}

async function signIn(page: Page): Promise<void> {
  await page.locator('#signin').waitFor();
  await page.fill('#email', RIDER.email);
  await page.fill('#password', RIDER.password);
  await page.click('#signin-button');
  await page.locator('#wp-0').waitFor();
}

/** Clicks two points of the map (a quarter in from opposite corners) and waits for both routes. */
async function clickTwoPoints(page: Page): Promise<void> {
  const box = await page.locator('#map').boundingBox();
  if (!box) throw new Error('no map');
  await page.mouse.click(box.x + box.width * 0.25, box.y + box.height * 0.3);
  await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.7);
  await page.locator('.route.safe .steps li').first().waitFor({ timeout: 30_000 });
  await page.locator('.route.direct .steps li').first().waitFor();
}

beforeAll(async () => {
  executablePath = ensureChromium();
  const built = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-web.mjs')], {
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`npm run build:web failed: ${built.stderr}`);
  fs.mkdirSync(SHOTS, { recursive: true });
  // The recorded Citi Bike feed (no discovery file of its own: one lists what was recorded).
  gbfs = await startGbfsServer(recorded('citibike-nyc-2024-10-02', 'citibike'));
  gbfs.set('/citibike/gbfs.json', {
    json: discovery(gbfs.base, 'citibike', ['station_information', 'station_status'], '1.1'),
  });
  // A hand-written dockless system with a per-minute plan: one bike in City Hall Park.
  gbfs.set('/dockless/gbfs.json', {
    json: discovery(gbfs.base, 'dockless', ['free_bike_status', 'system_pricing_plans']),
  });
  gbfs.set('/dockless/free_bike_status.json', {
    json: {
      last_updated: Math.floor(Date.now() / 1000),
      ttl: 60,
      version: '2.3',
      data: {
        bikes: [{ bike_id: 'b1', lat: 40.7125, lon: -74.0068, is_reserved: false, is_disabled: false }],
      },
    },
  });
  gbfs.set('/dockless/system_pricing_plans.json', {
    json: {
      last_updated: Math.floor(Date.now() / 1000),
      ttl: 60,
      version: '2.3',
      data: {
        plans: [
          {
            plan_id: 'single',
            name: 'Single ride',
            currency: 'USD',
            price: 1,
            is_taxable: false,
            description: '$1.00 unlock fee, $0.39 per minute.',
            per_min_pricing: [{ start: 0, rate: 0.39, interval: 1 }],
          },
        ],
      },
    },
  });
  const config = testConfig({
    QUIETWAY_GBFS_SYSTEMS: JSON.stringify([
      { id: 'citibike', city: 'nyc', url: `${gbfs.base}/citibike/gbfs.json`, name: 'Citi Bike' },
      { id: 'dockless', city: 'nyc', url: `${gbfs.base}/dockless/gbfs.json`, name: 'Test Dockless' },
    ]),
  });
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir);
  app = await buildApp({ config });
  await app.gbfs.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await app.inject({ method: 'POST', url: '/auth/v1/signup', payload: RIDER });
  // A disruption in force on Ann Street: its ways are drawn as avoided, its pin has details.
  const city = app.engine.city('nyc');
  if (!city) throw new Error('no graph');
  const ways = (await city.engine.roads([-74.0085, 40.7095, -74.0055, 40.7115])).filter(
    (s) => s.name === 'Ann Street',
  );
  expect(ways.length).toBeGreaterThan(0);
  const g = ways[0]!.geometry;
  pin = [((g[0] as number) + (g[2] as number)) / 2, ((g[1] as number) + (g[3] as number)) / 2];
  app.repos.disruptions.create({
    source: 'curator',
    city: 'nyc',
    severity: 'avoid',
    location: pin,
    startDate: todayLocal(city.timezone, -1),
    startMinute: 0,
    endDate: todayLocal(city.timezone, 7),
    endMinute: 1440,
    wayIds: [...new Set(ways.map((w) => w.wayId))],
    ...disruption,
  });
  // An accepted weekly avoidance window in force all day on another street.
  const street = (await city.engine.roads([-74.0095, 40.7105, -74.0055, 40.7125])).find(
    (s) =>
      s.name && !['Ann Street', 'Broadway'].includes(s.name) && s.length > 60 && s.forwardBike === 'ride',
  );
  if (!street) throw new Error('no street for the window');
  windowStreet = { name: street.name as string, wayId: street.wayId, at: midpoint(street.geometry) };
  // The longest straight piece of a quiet stretch, ridden along its drawing (one-way streets are common).
  let best: { from: [number, number]; to: [number, number]; metres: number } | null = null;
  for (const s of await city.engine.roads([-74.012, 40.709, -74.003, 40.715])) {
    if (s.forwardClass !== 'quiet' || s.forwardBike !== 'ride') continue;
    if (s.wayId === street.wayId || ways.some((w) => w.wayId === s.wayId)) continue;
    const g2 = s.geometry;
    for (let i = 0; i + 3 < g2.length; i += 2) {
      const from: [number, number] = [g2[i] as number, g2[i + 1] as number];
      const to: [number, number] = [g2[i + 2] as number, g2[i + 3] as number];
      const metres = Math.hypot((to[0] - from[0]) * 84_300, (to[1] - from[1]) * 111_195);
      if (!best || metres > best.metres) best = { from, to, metres };
    }
  }
  if (!best || best.metres < 80) throw new Error('no quiet stretch');
  const { from, to } = best;
  quietStretch = [0.25, 0.75].map((t) => [from[0] + t * (to[0] - from[0]), from[1] + t * (to[1] - from[1])]);
  const admin = await app.inject({ method: 'POST', url: '/auth/v1/signup', payload: ADMIN });
  app.repos.users.setRole(ADMIN.email, 'admin');
  const made = await app.inject({
    method: 'POST',
    url: '/api/admin/changes/',
    headers: { authorization: `Bearer ${admin.json().access_token}` },
    payload: {
      city: 'nyc',
      change: {
        kind: 'window',
        way_ids: [street.wayId],
        severity: 'avoid',
        schedule: {
          kind: 'weekly',
          weekdays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
          start_minute: 0,
          end_minute: 1440,
        },
        name: 'Play street',
        notes: 'Children playing',
      },
    },
  });
  expect(made.statusCode, made.body).toBe(201);
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
}, 180_000);

/** The middle of the longest segment of a flat [lon, lat, …] line. */
function midpoint(g: Float64Array): [number, number] {
  let best: [number, number] = [g[0] as number, g[1] as number];
  let longest = -1;
  for (let i = 0; i + 3 < g.length; i += 2) {
    const len = Math.hypot(
      (g[i + 2] as number) - (g[i] as number),
      (g[i + 3] as number) - (g[i + 1] as number),
    );
    if (len > longest) {
      longest = len;
      best = [
        ((g[i] as number) + (g[i + 2] as number)) / 2,
        ((g[i + 1] as number) + (g[i + 3] as number)) / 2,
      ];
    }
  }
  return best;
}

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await gbfs?.close();
});

describe('map pages', () => {
  it('serves both pages and their bundle from the server itself', async () => {
    for (const url of ['/map/', '/map/route', '/map/route/']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['content-security-policy']).toContain("connect-src 'self'");
      expect(res.body).not.toMatch(/(src|href)=["']https?:/);
    }
    const js = await app.inject({ method: 'GET', url: '/map/assets/route.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    const again = await app.inject({
      method: 'GET',
      url: '/map/assets/route.js',
      headers: { 'if-none-match': js.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    expect((await app.inject({ method: 'GET', url: '/map/assets/maplibre-gl-worker.mjs' })).statusCode).toBe(
      200,
    );
    // Compressed copies made at build time, for browsers that take them.
    for (const [encoding, inflate] of [
      ['br', zlib.brotliDecompressSync],
      ['gzip', zlib.gunzipSync],
    ] as const) {
      const packed = await app.inject({
        method: 'GET',
        url: '/map/assets/route.js',
        headers: { 'accept-encoding': `${encoding}, deflate` },
      });
      expect(packed.headers['content-encoding']).toBe(encoding);
      expect(packed.headers.vary).toBe('Accept-Encoding');
      expect(inflate(packed.rawPayload).toString()).toBe(js.body);
    }
    for (const url of ['/map/assets/nope.js', '/map/assets/..%2Fpackage.json', '/map/assets/map.html']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBeGreaterThanOrEqual(400);
    }
    // The cities, each with its bike-share systems (the planner asks for options only where there is one).
    const cities = (await app.inject({ method: 'GET', url: '/safety-map/' })).json().cities;
    expect(cities).toEqual([
      expect.objectContaining({ id: 'nyc', bike_share: ['Citi Bike', 'Test Dockless'] }),
    ]);
    const list = await app.inject({ method: 'GET', url: '/safety-map/nyc/disruptions/' });
    expect(list.statusCode).toBe(200);
    expect(list.json().disruptions).toEqual([
      expect.objectContaining({ name: 'Ann Street', severity: 'avoid', location: pin }),
    ]);
    expect((await app.inject({ method: 'GET', url: '/safety-map/atlantis/disruptions/' })).statusCode).toBe(
      404,
    );
    const schedule = (weekdays: string[], start_minute: number, end_minute: number) => ({
      name: '',
      notes: '',
      schedule: { weekdays, start_minute, end_minute },
    });
    expect(describeWindow(schedule(['fri', 'mon', 'tue', 'wed', 'thu'], 450, 540))).toBe(
      'Time window: Mon–Fri 07:30–09:00',
    );
    expect(describeWindow(schedule(['sat', 'sun', 'wed'], 1320, 360))).toBe(
      'Time window: Wed, Sat, Sun 22:00–06:00',
    );
  });

  it('the safety map draws the roads by class, a disruption with its details, and a road on click', async () => {
    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      const ctx = await context(viewport);
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${base}/map/${VIEW}`);
      await mapSettled(page);
      expect(await rendered(page, 'roads')).toBeGreaterThan(50);
      expect(await rendered(page, 'changes')).toBeGreaterThan(0);
      expect(await page.textContent('#disruptions')).toContain('Avoid: Ann Street');
      await page.screenshot({ path: path.join(SHOTS, `safety-map-${size}.png`) });
      if (size === 'desktop') {
        // The pin: its details.
        const p = await pointOf(page, pin);
        await page.mouse.click(p.x, p.y);
        await expect.poll(() => page.textContent('#details')).toContain(disruption.notes);
        // A road away from the pin: its class, access and lighting.
        const road = await page.evaluate(() => {
          const m = (
            globalThis as unknown as {
              quietwayMap: {
                queryRenderedFeatures(o: { layers: string[] }): { properties: Record<string, unknown> }[];
              };
            }
          ).quietwayMap;
          const f = m
            .queryRenderedFeatures({ layers: ['roads'] })
            .find((x) => x.properties.name === 'Broadway' && !x.properties.avoidance);
          return f?.properties.name as string | undefined;
        });
        expect(road).toBe('Broadway');
        const broadway = await page.evaluate(async () => {
          const m = (
            globalThis as unknown as {
              quietwayMap: {
                queryRenderedFeatures(o: { layers: string[] }): {
                  properties: Record<string, unknown>;
                  geometry: { coordinates: [number, number][] };
                }[];
              };
            }
          ).quietwayMap;
          const f = m
            .queryRenderedFeatures({ layers: ['roads'] })
            .find((x) => x.properties.name === 'Broadway');
          const c = f?.geometry.coordinates ?? [];
          const a = c[0] as [number, number];
          const b = c[1] as [number, number];
          return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] as [number, number];
        });
        const q = await pointOf(page, broadway);
        await page.mouse.click(q.x, q.y);
        await expect.poll(() => page.textContent('#details')).toContain('Safety class');
        expect(await page.textContent('#details')).toContain('Broadway');
        expect(await page.locator('.maplibregl-popup').count()).toBe(1);
        await page.evaluate(() => {
          const doc = (
            globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
          ).document;
          doc.getElementById('details').textContent = '';
        });
        // The street under an accepted weekly window: its schedule in words.
        const w = await pointOf(page, windowStreet.at);
        await page.mouse.click(w.x, w.y);
        await expect
          .poll(() => page.textContent('#details'))
          .toContain('Play street: daily 00:00–24:00 (Children playing)');
        expect(await page.textContent('#details')).toContain(windowStreet.name);
        // By keyboard: the map centred on Broadway (as arrow keys would pan it), then the button.
        await page.evaluate(
          (c) =>
            (
              globalThis as unknown as { quietwayMap: { jumpTo(o: { center: [number, number] }): void } }
            ).quietwayMap.jumpTo({
              center: c,
            }),
          broadway,
        );
        await page.focus('#centre-details');
        await page.keyboard.press('Enter');
        await expect.poll(() => page.textContent('#details')).toContain('Broadway');
        // The night toggle shows lit roads, by keyboard.
        await page.focus('#night');
        await page.keyboard.press('Space');
        await expect.poll(() => page.isVisible('.legend li.night-only')).toBe(true);
        await mapSettled(page);
        await page.screenshot({ path: path.join(SHOTS, 'safety-map-desktop-night.png') });
      }
      expect(errors).toEqual([]);
      await ctx.close();
    }
    expect(seen.some((u) => u.startsWith(`${base}/safety-map/nyc/tiles/`))).toBe(true);
    expect(outside).toEqual([]);
  }, 120_000);

  it('the route planner shows SuperSafe and Direct with their steps for two clicked points', async () => {
    const ctx = await context(DESKTOP);
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/map/route${VIEW}`);
    await signIn(page);
    await mapSettled(page);
    await clickTwoPoints(page);
    // Two routes drawn and two step lists with their summaries.
    await mapSettled(page);
    expect(await rendered(page, 'route-safe')).toBeGreaterThan(0);
    expect(await rendered(page, 'route-direct')).toBeGreaterThan(0);
    for (const kind of ['safe', 'direct']) {
      expect(await page.locator(`.route.${kind} .steps li`).count()).toBeGreaterThan(1);
      expect(await page.textContent(`.route.${kind} .summary`)).toMatch(
        /Distance[\d.]+ k?m.*Time\d+ min.*Climb\d+ m/,
      );
      expect(await page.locator(`.route.${kind} .classes li`).count()).toBeGreaterThan(0);
    }
    expect(await page.locator('.route.safe .steps li').last().textContent()).toContain(
      'Arrive at destination',
    );
    // The explanation sentence, under the two summaries.
    const explanation = page.locator('#explanation');
    await explanation.waitFor({ timeout: 30_000 });
    expect(await explanation.textContent()).toMatch(
      /^(Why SuperSafe:|One route for both:|SuperSafe and Direct:) \S.*\.$/,
    );
    await explanation.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'route-planner-desktop-explanation.png') });
    // The recorded Citi Bike feed: a docked option, walk, ride and walk, with the stations' live counts.
    const docked = page.locator('#options .option.docked:not(.electric)');
    await docked.waitFor({ timeout: 30_000 });
    expect(await docked.locator('h3').textContent()).toBe('Citi Bike · docked bike');
    expect(await docked.locator('.legs li').evaluateAll((ls) => ls.map((l) => l.className))).toEqual([
      'leg walking',
      'leg cycling',
      'leg walking',
    ]);
    const legs = await docked.locator('.legs li').allTextContents();
    expect(legs[0]).toMatch(/^Walk [\d.]+ k?m, \d+ min → \d+ bikes?$/);
    expect(legs[1]).toMatch(/^Ride [\d.]+ k?m, \d+ min → \d+ docks?$/);
    expect(legs[2]).toMatch(/^Walk [\d.]+ k?m, \d+ min → End$/);
    expect(await docked.locator('.total').textContent()).toMatch(
      /^\d+ min · [\d.]+ k?m, [\d.]+ k?m of it ridden$/,
    );
    // Citi Bike's recording publishes no pricing plans: said so, with the stations' app link.
    expect(await docked.locator('.price').textContent()).toContain('publishes no pricing');
    expect(await docked.locator('.apps a').getAttribute('href')).toBe('https://bkn.lft.to/lastmile_qr_scan');
    // The hand-written dockless system: walk to the bike, ride to the door, the plan's price for the ride.
    const dockless = page.locator('#options .option.dockless');
    expect(await dockless.locator('h3').textContent()).toBe('Test Dockless · dockless bike');
    const dlegs = await dockless.locator('.legs li').allTextContents();
    expect(dlegs).toHaveLength(2);
    expect(dlegs[0]).toMatch(/^Walk .* → Pick up bike$/);
    expect(dlegs[1]).toMatch(/^Ride [\d.]+ k?m, (\d+) min → End$/);
    const price = (await dockless.locator('.price').textContent()) ?? '';
    const cost = Number(
      /^About \$(\d+\.\d\d) for this ride\. \$1\.00 unlock fee, \$0\.39 per minute\.$/.exec(price)?.[1],
    );
    expect((cost - 1) / 0.39).toBeCloseTo(Math.round((cost - 1) / 0.39), 5);
    expect(cost).toBeGreaterThan(1);
    expect(await dockless.locator('.apps').count()).toBe(0);
    await page.screenshot({ path: path.join(SHOTS, 'route-planner-desktop.png') });
    // Its legs drawn on the map: riding solid, walking dotted.
    expect(await rendered(page, 'option-ride')).toBe(0);
    await docked.locator('button.show').click();
    await expect.poll(() => docked.locator('button.show').getAttribute('aria-pressed')).toBe('true');
    await mapSettled(page);
    expect(await rendered(page, 'option-ride')).toBeGreaterThan(0);
    expect(await rendered(page, 'option-walk')).toBeGreaterThan(0);
    expect(await rendered(page, 'option-stops')).toBe(2);
    await docked.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'route-planner-desktop-bike-share.png') });
    await docked.locator('button.show').click();
    await expect.poll(() => rendered(page, 'option-ride')).toBe(0);
    // A step zooms the map to it.
    const zoomBefore = await page.evaluate(() =>
      (globalThis as unknown as { quietwayMap: { getZoom(): number } }).quietwayMap.getZoom(),
    );
    const step = page.locator('.route.safe .steps button').nth(1);
    const instruction = (await step.locator('.instr').textContent()) ?? '';
    await step.click();
    await expect.poll(() => page.textContent('#status')).toBe(instruction);
    await page.waitForTimeout(600);
    const zoomAfter = await page.evaluate(() =>
      (globalThis as unknown as { quietwayMap: { getZoom(): number } }).quietwayMap.getZoom(),
    );
    expect(zoomAfter).toBeGreaterThan(zoomBefore);
    // GPX of the chosen route (Direct).
    await page.check('#choose-direct');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#gpx')]);
    expect(download.suggestedFilename()).toBe('quietway-direct.gpx');
    const gpx = fs.readFileSync((await download.path()) as string, 'utf8');
    expect(gpx).toContain('<gpx version="1.1" creator="Quietway"');
    expect(gpx.match(/<trkpt /g)?.length).toBeGreaterThan(3);
    expect(gpx.match(/<wpt /g)?.length).toBe(2);
    // The base roads in the safety classes' colours on demand.
    await page.check('#classes');
    expect(
      await page.evaluate(() =>
        JSON.stringify(
          (
            globalThis as unknown as { quietwayMap: { getPaintProperty(l: string, p: string): unknown } }
          ).quietwayMap.getPaintProperty('roads', 'line-color'),
        ),
      ),
    ).toContain('#0072B2');
    // The start found by place search, by keyboard only.
    await page.fill('#wp-0', '');
    await page.focus('#wp-0');
    await page.keyboard.type('city hall');
    await page.locator('#wp-0-list li[role=option]').first().waitFor();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.inputValue('#wp-0')).toBe('City Hall');
    await page.locator('.route.safe .steps li').first().waitFor();
    // Departure time and the night override are sent with the routes.
    const sent: Record<string, unknown>[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/directions/v2/')) sent.push(r.postDataJSON() as Record<string, unknown>);
    });
    await page.fill('#departure', '2026-06-21T23:30');
    await page.selectOption('#night', 'day');
    await expect.poll(() => sent.filter((b) => b.nighttime === false).length).toBe(2);
    expect(sent.at(-1)).toMatchObject({ departure_time: '2026-06-21T23:30', nighttime: false });
    // Two points on one quiet stretch: one route for both, said so under the summaries.
    await page.click('#clear');
    await page.evaluate(
      (c) =>
        (
          globalThis as unknown as {
            quietwayMap: { jumpTo(o: { center: [number, number]; zoom: number }): void };
          }
        ).quietwayMap.jumpTo({ center: c, zoom: 17 }),
      [(quietStretch[0]![0] + quietStretch[1]![0]) / 2, (quietStretch[0]![1] + quietStretch[1]![1]) / 2] as [
        number,
        number,
      ],
    );
    await mapSettled(page);
    for (const at of quietStretch) {
      const p = await pointOf(page, at);
      await page.mouse.click(p.x, p.y);
    }
    await expect
      .poll(() => page.locator('#explanation:visible').textContent(), { timeout: 30_000 })
      .toBe('One route for both: The most direct route as well as the quietest.');
    expect(errors).toEqual([]);
    await ctx.close();

    // A phone-sized viewport: the same flow, the panel under the map.
    const phone = await context(PHONE);
    const small = await phone.newPage();
    await small.goto(`${base}/map/route${VIEW}`);
    await signIn(small);
    await mapSettled(small);
    await clickTwoPoints(small);
    await small.locator('#explanation').waitFor({ timeout: 30_000 });
    await small.locator('#options .option.docked').first().waitFor({ timeout: 30_000 });
    await mapSettled(small);
    await small.screenshot({ path: path.join(SHOTS, 'route-planner-phone.png') });
    await small.locator('#results').scrollIntoViewIfNeeded();
    await small.screenshot({ path: path.join(SHOTS, 'route-planner-phone-steps.png') });
    await phone.close();
    expect(outside).toEqual([]);
  }, 120_000);
});
