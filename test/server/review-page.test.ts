// The reviewer page in headless Chromium (Debian `chromium`, driven by playwright-core): an admin
// signs in, sees the queue, opens a report drawn over the graph's roads, and accepts it with a
// click; the change is then in force. Chromium is installed when missing; the test never skips.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
let app: FastifyInstance;
let browser: Browser;
let base: string;

function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  const r = spawnSync('apt-get', ['install', '-y', 'chromium'], { encoding: 'utf8', stdio: 'pipe' });
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is needed for this test and could not be installed: ${r.stderr || r.error?.message}`,
    );
  }
}

beforeAll(async () => {
  ensureChromium();
  const config = testConfig({ QUIETWAY_REPORT_ANALYSIS_MS: '200' });
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-soho-tiny.osm.pbf')], config.graphDir);
  app = await buildApp({ config });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('reviewer page', () => {
  it('serves one self-contained page with no external assets', async () => {
    const res = await app.inject({ method: 'GET', url: '/review/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).not.toMatch(/(src|href)=["']https?:/);
  });

  it('signs an admin in, draws a report over the roads, and accepts it with a click', async () => {
    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'reviewer@example.org', password: 'long enough pw', name: 'Rita' },
    });
    app.repos.users.setRole('reviewer@example.org', 'admin');
    const rider = signup.json().access_token as string;
    // A report on the first named street of the extract.
    const city = app.engine.city('nyc');
    if (!city) throw new Error('no graph');
    const seg = (await city.engine.roads(city.engine.stats().bbox)).find(
      (s) => s.name && s.forwardBike === 'ride' && s.length > 40,
    );
    if (!seg) throw new Error('no street');
    const at: [number, number] = [
      ((seg.geometry[0] as number) + (seg.geometry[2] as number)) / 2,
      ((seg.geometry[1] as number) + (seg.geometry[3] as number)) / 2,
    ];
    const filed = await app.inject({
      method: 'POST',
      url: '/reports/',
      headers: { authorization: `Bearer ${rider}` },
      payload: { issue_type: 'road_closed', issue_subtype: 'barrier_gate', location: at },
    });
    const id = filed.json().id as number;
    await app.reportWorker.run();
    expect(app.repos.reports.byId(id)?.status, app.repos.reports.byId(id)?.summary ?? '').toBe('in_review');

    const page = await browser.newPage();
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(base)) external.push(r.url());
    });
    await page.goto(`${base}/review/`);
    await page.fill('#email', 'reviewer@example.org');
    await page.fill('#password', 'long enough pw');
    await page.click('#signin button[type=submit]');
    const item = page.locator(`#queue button[data-id="${id}"]`);
    await item.waitFor();
    await item.click();
    await page.locator('#map polyline').first().waitFor();
    expect(await page.locator('#map polyline').count()).toBeGreaterThan(3);
    expect(await page.locator('#map #pin').count()).toBe(1);
    expect(await page.inputValue('#proposal')).toContain('close_way');
    expect(await page.textContent('#proposal-text')).toContain('closing');
    await page.click('#accept');
    await page.locator('#message').filter({ hasText: /\S/ }).waitFor();
    expect(await page.textContent('#message')).toMatch(new RegExp(`^Accepted #${id}: Accepted: closing`));
    expect(app.repos.reports.byId(id)?.status).toBe('accepted');
    const changes = app.repos.reports.changes({ city: 'nyc', status: 'active' });
    expect(changes.some((c) => c.reportId === id && c.kind === 'close_way')).toBe(true);
    expect(external).toEqual([]);
    await page.close();
  }, 60_000);
});
