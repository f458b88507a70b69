// Rate limits per credential and endpoint class (interface spec "Limits", decisions.md). The
// counting store is an interface: the in-process fixed-window store is the default; several server
// processes share one in Redis (ratelimit-redis.ts, QUIETWAY_REDIS_URL).
import { z } from 'zod';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimitStore {
  /** Counts one request against `key` in a window of `windowSeconds` allowing `limit`. */
  hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult> | RateLimitResult;
  /** Where `key` stands without counting a request (a store without it never blocks ahead). */
  peek?(key: string, limit: number): Promise<RateLimitResult> | RateLimitResult;
  close?(): void;
}

/** Fixed windows in a Map, swept of expired entries as it grows. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = Date.now();

  constructor(private readonly clock: () => number = Date.now) {}

  hit(key: string, limit: number, windowSeconds: number): RateLimitResult {
    const now = this.clock();
    if (now - this.lastSweep > 60_000 || this.windows.size > 100_000) this.sweep(now);
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.windows.set(key, w);
    }
    const resetSeconds = Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    w.count += 1;
    return { allowed: true, limit, remaining: limit - w.count, resetSeconds };
  }

  peek(key: string, limit: number): RateLimitResult {
    const now = this.clock();
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) return { allowed: true, limit, remaining: limit, resetSeconds: 0 };
    const resetSeconds = Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    return { allowed: w.count < limit, limit, remaining: Math.max(0, limit - w.count), resetSeconds };
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

/** Endpoint classes with their own limits. */
export const RATE_CLASSES = [
  'directions',
  'multimodal',
  'explain',
  'report_submit',
  'report_read',
  'profile',
  'admin',
  'place_search',
  'weather',
  'auth',
  'auth_failures',
  'events',
  'safety_map',
] as const;
export type RateClass = (typeof RATE_CLASSES)[number];

/** Who a request is counted against: an API key, a user (per app for OAuth tokens), or a client IP. */
export type Bucket = 'key' | 'user' | 'ip';

/** [requests, window seconds]. */
const limit = z.tuple([z.number().int().positive(), z.number().int().positive()]);
const classLimits = z
  .object({ key: limit.optional(), user: limit.optional(), ip: limit.optional() })
  .strict();
export const rateLimitsSchema = z.partialRecord(z.enum(RATE_CLASSES), classLimits);
export type RateLimits = Record<RateClass, z.infer<typeof classLimits>>;

/**
 * The spec's numbers where it gives them (explain, report submissions, place search), decisions.md's
 * for directions, multi-modal, report reads, admin and profile endpoints, and ours for the rest
 * (documented in docs/api.md). All configurable through QUIETWAY_RATE_LIMITS.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  directions: { key: [300, 60], user: [600, 60] },
  multimodal: { key: [60, 60], user: [120, 60] },
  explain: { key: [10, 60], user: [20, 60] },
  report_submit: { key: [600, 3600], user: [60, 3600] },
  report_read: { key: [600, 60], user: [600, 60] },
  profile: { user: [600, 60] },
  admin: { user: [600, 60] },
  place_search: { user: [120, 60], ip: [60, 60], key: [600, 60] },
  weather: { user: [600, 60], ip: [60, 60], key: [600, 60] },
  auth: { ip: [30, 60] },
  // Failed authentications (bad keys, forged or malformed tokens, wrong passwords) per client IP;
  // past it, every credential from that IP is refused with 429 until the window ends.
  auth_failures: { ip: [20, 60] },
  events: { ip: [600, 60], user: [600, 60], key: [600, 60] },
  safety_map: { ip: [1200, 60], user: [1200, 60], key: [1200, 60] },
};

/** Merges overrides (from configuration) into the defaults, class by class and bucket by bucket. */
export function mergeRateLimits(overrides: Partial<RateLimits>): RateLimits {
  const out = structuredClone(DEFAULT_RATE_LIMITS);
  for (const [cls, buckets] of Object.entries(overrides) as [RateClass, RateLimits[RateClass]][]) {
    out[cls] = { ...out[cls], ...buckets };
  }
  return out;
}
