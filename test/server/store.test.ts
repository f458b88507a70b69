// The SQL seam on both stores: the same cases against the embedded SQLite file and a real
// PostgreSQL (Debian's, started here unless the suite already runs on one). The rest of the suite
// runs on whichever store QUIETWAY_TEST_STORE names; these run on both in every pass.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { openDatabase, openPostgres } from '../../server/src/db/database.js';
import { MIGRATIONS, postgresMigration } from '../../server/src/db/migrations.js';
import { PgDb, toPostgresPlaceholders } from '../../server/src/db/pg.js';
import { ConflictError, createRepositories, ReadCache } from '../../server/src/db/repositories.js';
import { type Db, isUniqueViolation } from '../../server/src/db/sql.js';
import { buildGraph, freshPostgresDatabase, SHARED_DATA, tempDir, testConfig } from '../helpers.js';
import { startPostgres, type TestPostgres } from '../postgres.js';

let cluster: TestPostgres | null = null;

beforeAll(async () => {
  if (!process.env.QUIETWAY_TEST_PG_URL) {
    cluster = await startPostgres();
    process.env.QUIETWAY_TEST_PG_URL = cluster.url;
  }
}, 300_000);
afterAll(() => {
  if (cluster) {
    cluster.stop();
    delete process.env.QUIETWAY_TEST_PG_URL;
  }
});

const stores: [string, () => { open: () => Db }][] = [
  [
    'sqlite',
    () => {
      const file = path.join(tempDir(), 'q.db');
      return { open: () => openDatabase(file) };
    },
  ],
  [
    'postgres',
    () => {
      const url = freshPostgresDatabase();
      return { open: () => openPostgres(url) };
    },
  ],
];

const disruption = (city: string) => ({
  source: 'admin',
  city,
  name: 'Works',
  notes: '',
  severity: 'avoid' as const,
  location: [-74, 40.7] as [number, number],
  startDate: '2026-01-01',
  startMinute: 0,
  endDate: '2027-01-01',
  endMinute: 0,
});

const until = async (ok: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe.each(stores)('the store on %s', (dialect, make) => {
  it('migrates a fresh store, and several opening it together migrate it once', () => {
    const store = make();
    const [a, b] = [store.open(), store.open()];
    expect(a.dialect).toBe(dialect);
    const tables = a
      .prepare(
        dialect === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
          : "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
      )
      .pluck()
      .all() as string[];
    for (const t of ['users', 'api_keys', 'disruptions', 'rides', 'events', 'reports', 'routing_sequence']) {
      expect(tables).toContain(t);
    }
    a.close();
    b.close();
  });

  it('gives ids, counts and rows alike: ids of inserts, numbers for COUNT and SUM, plucked columns', () => {
    const db = make().open();
    const repos = createRepositories(db);
    const user = repos.users.create({ email: 'Rider@Example.org', name: 'Ada', passwordHash: null });
    expect(typeof user.id).toBe('number');
    // Emails are case-insensitive, for lookups and uniqueness alike.
    expect(repos.users.byEmail('rider@example.ORG')?.id).toBe(user.id);
    expect(() => repos.users.create({ email: 'RIDER@example.org', name: 'B', passwordHash: null })).toThrow(
      ConflictError,
    );
    for (const d of [1200.5, 800]) {
      repos.platform.addRide({
        userId: user.id,
        dateStarted: '2026-11-02T08:00:00Z',
        localTimezone: 'America/New_York',
        polyline: '',
        destinationName: null,
        destinationAddress: null,
        distanceTraveled: d,
        durationTraveled: 300,
        completed: true,
        eventId: null,
        weatherConditions: null,
        temperature: null,
        windSpeed: null,
        weatherFetchedAt: null,
        weatherDisplay: null,
        welcomeMessage: null,
      });
    }
    expect(repos.platform.rideStats(user.id)).toEqual([
      { month: '2026-11', rides: 2, distance: 2000.5, duration: 600 },
    ]);
    expect(repos.platform.rides(user.id, 0, 1).total).toBe(2);
    expect(repos.platform.searchUsers('ad', 5)).toEqual([user.id]);
    expect(repos.platform.searchUsers('%', 5)).toEqual([]);
    const count = db.prepare('SELECT COUNT(*) FROM rides WHERE user_id = ?').pluck();
    expect(count.get(user.id)).toBe(2);
    // Named parameters, and a filter left open with NULL.
    expect(repos.reports.changes({})).toEqual([]);
    repos.close();
  });

  it('rolls a failed transaction back whole, and a failed nested one back to its savepoint', () => {
    const db = make().open();
    const insert = db.prepare('INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)');
    const names = () => db.prepare('SELECT name FROM server_secrets ORDER BY name').pluck().all();
    expect(() =>
      db.transaction(() => {
        insert.run('a', 'x', 't');
        insert.run('a', 'y', 't');
      })(),
    ).toThrow();
    expect(names()).toEqual([]);
    db.transaction(() => {
      insert.run('b', 'x', 't');
      try {
        db.transaction(() => {
          insert.run('c', 'x', 't');
          insert.run('b', 'y', 't');
        })();
      } catch (err) {
        expect(isUniqueViolation(err)).toBe(true);
      }
      insert.run('d', 'x', 't');
    })();
    expect(names()).toEqual(['b', 'd']);
    db.close();
  });

  it("sees another connection's writes: the key cache, and the routing sequence", async () => {
    const store = make();
    const [one, two] = [createRepositories(store.open()), createRepositories(store.open())];
    const key = one.apiKeys.create({
      kind: 'app',
      name: 'k',
      source: null,
      legacyV1: false,
      prefix: 'qw_',
      keyHash: 'h1',
    });
    expect(two.apiKeys.byHash('h1')?.revokedAt).toBeNull();
    const seq = two.routingSequence().get('nyc') ?? 0;
    const signal = two.routingSignal();
    one.apiKeys.revoke(key.id);
    one.disruptions.create(disruption('nyc'));
    await until(() => two.apiKeys.byHash('h1')?.revokedAt !== null);
    expect(two.routingSequence().get('nyc')).toBe(seq + 1);
    if (dialect === 'postgres') {
      // NOTIFY moved the other connection's signal: it need not read the sequence to know.
      await until(() => two.routingSignal() !== signal);
    } else {
      expect(signal).toBeNull();
    }
    one.close();
    two.close();
  });
});

describe('PostgreSQL specifics', () => {
  it('translates placeholders outside quotes and comments, one number per name', () => {
    expect(toPostgresPlaceholders('SELECT ? , \'?\', "a?" -- ?\n, ?').text).toBe(
      'SELECT $1 , \'?\', "a?" -- ?\n, $2',
    );
    expect(toPostgresPlaceholders('WHERE a = @x OR b = @y OR c = @x')).toEqual({
      text: 'WHERE a = $1 OR b = $2 OR c = $1',
      names: ['x', 'y'],
    });
  });

  it('has a PostgreSQL text for every migration', () => {
    for (let i = 0; i < MIGRATIONS.length; i++) expect(postgresMigration(i)).not.toMatch(/NOCASE|ROWID/);
  });

  it('refuses an unreachable server with a clear error, within the time-out', () => {
    const t = Date.now();
    expect(() => new PgDb('postgres://nobody:secret@127.0.0.1:9/none', { timeoutMs: 5000 })).toThrow(
      /PostgreSQL at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:9\/none/,
    );
    expect(Date.now() - t).toBeLessThan(6000);
  });
});

describe('PostgreSQL going away and coming back', () => {
  // A cluster of its own: halting the suite's would fail the tests running beside this one.
  let own: TestPostgres;
  let app: FastifyInstance;
  let key: string;
  const dataDir = tempDir();

  beforeAll(async () => {
    own = await startPostgres();
    buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-soho-tiny.osm.pbf')], path.join(dataDir, 'graphs'));
    app = await buildApp({
      // The report analysis worker reads the store every 100 ms, outage or not.
      config: testConfig({
        QUIETWAY_DATA_DIR: dataDir,
        QUIETWAY_DATABASE_URL: own.url,
        QUIETWAY_REPORT_ANALYSIS_MS: '100',
      }),
    });
    key = issueKey(app.repos, { kind: 'app', name: 'outage', source: null, legacyV1: false }).key;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    own?.stop();
  });

  const directions = () =>
    app.inject({
      method: 'POST',
      url: '/directions/v2/',
      headers: { apikey: key },
      payload: {
        coordinates: [
          [-74.0035, 40.7262],
          [-73.9968, 40.7225],
        ],
      },
    });
  const signup = (email: string) =>
    app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email, password: 'long enough pw', name: 'Rider' },
    });

  it('answers writes 503 at once while it is down, keeps routing, and works again when it is back', async () => {
    expect((await directions()).statusCode).toBe(200);
    own.halt();
    const started = performance.now();
    const refused = await signup('down@example.org');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json().error).toBe('Storage unavailable');
    // Failing fast, not waiting out a time-out (a statement's is 10 s): the store reconnects in
    // the background. (Generous bounds: a sign-up hashes a password first, on a loaded machine.)
    expect(performance.now() - started).toBeLessThan(2500);
    const again = performance.now();
    expect((await signup('down2@example.org')).statusCode).toBe(503);
    expect(performance.now() - again).toBeLessThan(2500);
    // Routing needs no database round trip: the key and the disruptions are cached.
    expect((await directions()).statusCode).toBe(200);
    // Background work that reads the store (the analysis worker) logs and waits: an unhandled
    // rejection here would end a server process (and fail this run).
    await new Promise((r) => setTimeout(r, 400));
    own.resume();
    const deadline = Date.now() + 10_000;
    let res = await signup('back@example.org');
    while (res.statusCode === 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await signup('back@example.org');
    }
    expect(res.statusCode).toBe(201);
    expect(app.repos.users.byEmail('back@example.org')).toBeDefined();
  }, 60_000);
});

describe('read caches while the store is down', () => {
  const down = () => Object.assign(new Error('PostgreSQL is unavailable'), { unavailable: true });

  it('answer from the generation before when a change was notified just before the outage', () => {
    let version = 1;
    const cache = new ReadCache<string>(() => version);
    expect(cache.get('key', () => 'record')).toBe('record');
    version++; // the request's own key touch, notified as the store went down
    expect(
      cache.get('key', () => {
        throw down();
      }),
    ).toBe('record');
    // Another error, or a key never read, is not hidden.
    expect(() =>
      cache.get('other', () => {
        throw down();
      }),
    ).toThrow('unavailable');
    expect(() =>
      cache.get('key', () => {
        throw new Error('syntax');
      }),
    ).toThrow('syntax');
    // Back up: read afresh.
    expect(cache.get('key', () => 'new record')).toBe('new record');
  });

  it('keep nothing of what this process cleared itself (a revoked key)', () => {
    const cache = new ReadCache<string>(() => 1);
    cache.get('key', () => 'record');
    cache.clear();
    expect(() =>
      cache.get('key', () => {
        throw down();
      }),
    ).toThrow('unavailable');
  });
});
