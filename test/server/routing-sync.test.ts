// Routing changes reach every process: two real server processes share one data directory (graphs
// and SQLite); a road change or disruption written through one changes the other's routes within a
// second, and lifting it restores them (reports/sync.ts polls the database's routing sequence).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { loadConfig } from '../../server/src/config.js';
import { openStore } from '../../server/src/db/database.js';
import { createRepositories } from '../../server/src/db/repositories.js';
import { buildGraph, SHARED_DATA, storeEnv, tempDir, testStore } from '../helpers.js';
import { compileServer, type ServerProcess, serve } from '../processes.js';

const dataDir = tempDir();
const servers: ServerProcess[] = [];
let a: ServerProcess;
let b: ServerProcess;
let appKey: string;
let admin: string;

// Across SoHo; the longest named step is what gets closed.
const FROM: [number, number] = [-74.0035, 40.7262];
const TO: [number, number] = [-73.9968, 40.7225];

type Route = {
  geometry: { coordinates: [number, number][] };
  steps: { name: string; geometry: { coordinates: [number, number][] } }[];
};

async function route(s: ServerProcess): Promise<Route> {
  const res = await fetch(`${s.base}/directions/v2/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: appKey },
    body: JSON.stringify({ coordinates: [FROM, TO] }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { route: Route }).route;
}

async function adminCall(s: ServerProcess, method: string, url: string, body?: object) {
  const res = await fetch(`${s.base}${url}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status, `${method} ${url}: ${res.status}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** Metres from a point to a polyline (flat approximation, fine at city scale). */
function distanceToLine(p: [number, number], line: [number, number][]): number {
  const kx = 111_320 * Math.cos((p[1] * Math.PI) / 180);
  const ky = 110_574;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 1 < line.length; i++) {
    const [ax, ay] = [((line[i] as number[])[0] as number) * kx, ((line[i] as number[])[1] as number) * ky];
    const [bx, by] = [
      ((line[i + 1] as number[])[0] as number) * kx,
      ((line[i + 1] as number[])[1] as number) * ky,
    ];
    const [px, py] = [p[0] * kx, p[1] * ky];
    const len2 = (bx - ax) ** 2 + (by - ay) ** 2;
    const t =
      len2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / len2));
    best = Math.min(best, Math.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay))));
  }
  return best;
}

/** Polls `s` until its route passes `point` (or not); the milliseconds it took. */
async function until(
  s: ServerProcess,
  point: [number, number],
  passes: boolean,
  limitMs = 3000,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const near = distanceToLine(point, (await route(s)).geometry.coordinates) < 1;
    if (near === passes) return Date.now() - started;
    if (Date.now() - started > limitMs)
      throw new Error(`route still ${passes ? 'avoids' : 'passes'} the point`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  compileServer();
  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-soho-tiny.osm.pbf')], path.join(dataDir, 'graphs'));
  // Both at once on a fresh database: the migrations run once.
  const env = {
    QUIETWAY_DATA_DIR: dataDir,
    QUIETWAY_SECRET_KEY: 'a'.repeat(64),
    QUIETWAY_REPORT_ANALYSIS_MS: '0',
    QUIETWAY_ROUTING_SYNC_MS: '250',
  };
  [a, b] = (await Promise.all([serve(env), serve(env)])) as [ServerProcess, ServerProcess];
  servers.push(a, b);
  const signup = await fetch(`${a.base}/auth/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@example.org', password: 'long enough pw', name: 'Admin' }),
  });
  expect(signup.status).toBeLessThan(300);
  const repos = createRepositories(openStore(testStore(dataDir)));
  repos.users.setRole('admin@example.org', 'admin');
  appKey = issueKey(repos, { kind: 'app', name: 'sync', source: null, legacyV1: false }).key;
  repos.close();
  const signin = await fetch(`${a.base}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@example.org', password: 'long enough pw' }),
  });
  admin = ((await signin.json()) as { access_token: string }).access_token;
}, 180_000);
afterAll(() => {
  for (const s of servers) s.stop();
});

describe('routing changes across processes', () => {
  it('a closure and a disruption made through one process reach the other within a second, and so do their ends', async () => {
    const before = await route(b);
    expect(JSON.stringify(await route(a))).toBe(JSON.stringify(before));
    const step = before.steps
      .filter((s) => s.name)
      .sort((x, y) => y.geometry.coordinates.length - x.geometry.coordinates.length)[0];
    expect(step).toBeDefined();
    const coords = (step as Route['steps'][number]).geometry.coordinates;
    let point = coords[0] as [number, number];
    let len = -1;
    for (let i = 0; i + 1 < coords.length; i++) {
      const [p, q] = [coords[i] as [number, number], coords[i + 1] as [number, number]];
      const d = Math.hypot(q[0] - p[0], q[1] - p[1]);
      if (d > len) {
        len = d;
        point = [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2];
      }
    }
    const roads = (await (
      await fetch(
        `${b.base}/safety-map/nyc/roads/?bbox=${point[0] - 0.0003},${point[1] - 0.0003},${point[0] + 0.0003},${point[1] + 0.0003}`,
      )
    ).json()) as { features: { properties: { name: string; way_id: number } }[] };
    const near = roads.features
      .filter((f) => f.properties.name === step?.name)
      .map((f) => f.properties.way_id);
    expect(near.length).toBeGreaterThan(0);

    // A permanent closure through A: B routes around it within a second.
    const closed = await adminCall(a, 'POST', '/api/admin/changes/', {
      city: 'nyc',
      change: { kind: 'close_way', way_ids: near },
    });
    expect(await until(b, point, false)).toBeLessThan(1000);
    // Lifted through B: A (which made it) routes over it again.
    await adminCall(b, 'DELETE', `/api/admin/changes/${closed.id}/`);
    expect(await until(a, point, true)).toBeLessThan(1000);
    expect(await until(b, point, true)).toBeLessThan(1000);

    // A disruption (closed, running now) through A, then ended through A.
    const today = new Date();
    const day = (offset: number) =>
      new Date(today.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    const d = await adminCall(a, 'POST', '/api/admin/disruptions/', {
      name: 'Water main',
      notes: '',
      severity: 'closed',
      location: point,
      start_date: day(-2),
      start_minute: 0,
      end_date: day(2),
      end_minute: 0,
      way_ids: near,
    });
    expect(await until(b, point, false)).toBeLessThan(1000);
    await adminCall(a, 'POST', `/api/admin/disruptions/${d.id}/end/`);
    expect(await until(b, point, true)).toBeLessThan(1000);
    // Same routes everywhere at the end.
    expect(JSON.stringify(await route(a))).toBe(JSON.stringify(await route(b)));
  }, 60_000);

  it('a weighting change reaches another app on the same database within a second, and so does its lift', async () => {
    // Two apps in this process, each with its own engine, as two processes would have.
    const config = loadConfig({
      QUIETWAY_DATA_DIR: dataDir,
      QUIETWAY_LOG_LEVEL: 'silent',
      QUIETWAY_SECRET_KEY: 'a'.repeat(64),
      QUIETWAY_REPORT_ANALYSIS_MS: '0',
      QUIETWAY_ROUTING_SYNC_MS: '50',
      ...storeEnv(dataDir),
    });
    const [one, two] = await Promise.all([buildApp({ config }), buildApp({ config })]);
    try {
      await Promise.all([one.ready(), two.ready()]);
      const engineOf = (app: typeof one) => app.engine.city('nyc')?.engine;
      const own = JSON.parse(engineOf(two)?.weighting() as string);
      const pushFactor = () => JSON.parse(engineOf(two)?.weighting() as string).supersafe.push_factor;
      const within = async (check: () => boolean) => {
        const started = Date.now();
        while (!check()) {
          if (Date.now() - started > 1000) throw new Error('not within a second');
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      const c = one.roadChanges.create(
        'nyc',
        { kind: 'weighting', model: { supersafe: { push_factor: 7 } } },
        'test',
      );
      await within(() => pushFactor() === 7);
      one.roadChanges.lift(c.id, 'test');
      await within(
        () => JSON.stringify(JSON.parse(engineOf(two)?.weighting() as string)) === JSON.stringify(own),
      );
      // A re-sync after the writer's own change leaves its engine as it was (no second weighting).
      expect(JSON.parse(engineOf(one)?.weighting() as string)).toEqual(own);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 60_000);
});
