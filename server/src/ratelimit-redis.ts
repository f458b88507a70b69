// The rate-limit store several server processes share (QUIETWAY_REDIS_URL): the same fixed windows
// as the in-process store, kept in Redis. Each hit is one Lua script, so counting and the window's
// start are atomic across processes and the X-RateLimit-* numbers every process sends are exact;
// windows run on Redis's clock (a key's expiry), not on each process's.
import { Redis, type Result } from 'ioredis';
import type { RateLimitResult, RateLimitStore } from './ratelimit.js';

/**
 * KEYS[1] the window's key; ARGV[1] the limit, ARGV[2] the window in ms. Like the in-process store,
 * a refused request is not counted (the count stops at the limit). Returns {count, ms left, allowed}.
 */
const HIT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if count >= limit then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
  return {count, ttl, 0}
end
count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
return {count, ttl, 1}
`;

/** Where `key` stands: {count, ms left}. */
const PEEK = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return {count, redis.call('PTTL', KEYS[1])}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    quietwayHit(key: string, limit: number, windowMs: number): Result<[number, number, number], Context>;
    quietwayPeek(key: string): Result<[number, number], Context>;
  }
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;

  /**
   * `commandTimeoutMs` bounds how long a request waits for Redis; with Redis away, calls fail at
   * once (no offline queue) and the caller decides (the auth plugin lets the request through).
   */
  constructor(
    url: string,
    private readonly prefix = 'quietway:rl:',
    commandTimeoutMs = 1000,
  ) {
    this.redis = new Redis(url, {
      commandTimeout: commandTimeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: false,
    });
    // Connection errors are retried by the client; each failing call reports its own.
    this.redis.on('error', () => {});
    this.redis.defineCommand('quietwayHit', { numberOfKeys: 1, lua: HIT });
    this.redis.defineCommand('quietwayPeek', { numberOfKeys: 1, lua: PEEK });
  }

  /** Resolves once connected (start-up waits so the first requests are counted). */
  async ready(timeoutMs = 5000): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Redis not reachable within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const [count, ttl, allowed] = await this.redis.quietwayHit(
      this.prefix + key,
      limit,
      windowSeconds * 1000,
    );
    const resetSeconds = Math.max(1, Math.ceil(ttl / 1000));
    return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - count), resetSeconds };
  }

  async peek(key: string, limit: number): Promise<RateLimitResult> {
    const [count, ttl] = await this.redis.quietwayPeek(this.prefix + key);
    if (ttl < 0) return { allowed: true, limit, remaining: limit, resetSeconds: 0 };
    const resetSeconds = Math.max(1, Math.ceil(ttl / 1000));
    return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
  }

  close(): void {
    this.redis.disconnect();
  }
}
