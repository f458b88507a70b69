// Rate limits shared through Redis (QUIETWAY_REDIS_URL): two real server processes on one Redis
// count one window, and the X-RateLimit-* headers each sends are exact across them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../../server/src/ratelimit-redis.js';
import { tempDir } from '../helpers.js';
import { compileServer, type ServerProcess, serve } from '../processes.js';
import { startRedis, type TestRedis } from '../redis.js';

let redis: TestRedis;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  compileServer();
}, 180_000);
afterAll(() => {
  for (const s of servers) s.stop();
  redis?.stop();
});

// The tests run in order: the last one stops Redis.
describe('Redis rate-limit store', () => {
  it('counts a fixed window atomically and stops counting at the limit', async () => {
    const store = new RedisRateLimitStore(redis.url, `t${Date.now()}:`);
    await store.ready();
    try {
      expect(await store.peek('k', 3)).toMatchObject({ allowed: true, remaining: 3, resetSeconds: 0 });
      const hits = await Promise.all([1, 2, 3, 4, 5].map(() => store.hit('k', 3, 60)));
      expect(hits.filter((h) => h.allowed)).toHaveLength(3);
      expect(hits.map((h) => h.remaining).sort()).toEqual([0, 0, 0, 1, 2]);
      for (const h of hits) expect(h.resetSeconds).toBeGreaterThanOrEqual(59);
      expect(await store.peek('k', 3)).toMatchObject({ allowed: false, remaining: 0 });
      // A short window ends on Redis's clock.
      await store.hit('short', 1, 1);
      expect((await store.hit('short', 1, 1)).allowed).toBe(false);
      await new Promise((r) => setTimeout(r, 1100));
      expect(await store.hit('short', 1, 1)).toMatchObject({ allowed: true, remaining: 0 });
    } finally {
      store.close();
    }
  });

  it('two server processes on one Redis behave as one: exact headers, one shared limit', async () => {
    const limit = 10;
    for (let i = 0; i < 2; i++) {
      servers.push(
        await serve({
          QUIETWAY_DATA_DIR: tempDir(),
          QUIETWAY_REDIS_URL: redis.url,
          QUIETWAY_RATE_LIMITS: JSON.stringify({ safety_map: { ip: [limit, 60] } }),
        }),
      );
    }
    const [a, b] = servers as [ServerProcess, ServerProcess];
    expect(a.output()).toContain('rate limits shared through Redis');
    // Alternating between the processes, the remaining count falls by one each request.
    for (let i = 0; i < limit; i++) {
      const res = await fetch(`${(i % 2 ? b : a).base}/safety-map/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(limit - 1 - i));
    }
    for (const s of [a, b]) {
      const res = await fetch(`${s.base}/safety-map/`);
      expect(res.status).toBe(429);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      const body = (await res.json()) as { error: string; retry_after_seconds: number };
      expect(body.error).toBe('Rate limit exceeded');
      expect(Number(res.headers.get('retry-after'))).toBe(body.retry_after_seconds);
    }
  }, 60_000);

  it('a process whose Redis is unreachable at start refuses to start', async () => {
    await expect(
      serve({ QUIETWAY_DATA_DIR: tempDir(), QUIETWAY_REDIS_URL: 'redis://127.0.0.1:9' }),
    ).rejects.toThrow(/Redis not reachable/);
  }, 30_000);

  it('a Redis lost while running lets requests through uncounted instead of failing them', async () => {
    const a = servers[0] as ServerProcess;
    // The window is spent (previous test): 429 while Redis counts.
    expect((await fetch(`${a.base}/safety-map/`)).status).toBe(429);
    redis.stop();
    const started = Date.now();
    let res: Response;
    do {
      await new Promise((r) => setTimeout(r, 50));
      res = await fetch(`${a.base}/safety-map/`);
    } while (res.status === 429 && Date.now() - started < 5000);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    // Logged (the log is written asynchronously).
    for (let i = 0; i < 40 && !a.output().includes('rate-limit store unavailable'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(a.output()).toContain('rate-limit store unavailable');
  }, 30_000);
});
