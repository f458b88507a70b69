// Credentials and rate limits on every request. `onRequest` (before the body is read): resolve the
// credential, enforce the route's access rule (`config.access`), then count the request against its
// rate-limit bucket (`config.rateClass`), setting X-RateLimit-* headers and answering 429 past the
// limit.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Access, authorize, type Credential, CredentialResolver } from '../auth/access.js';
import { SecretBox } from '../auth/sealing.js';
import { SessionService } from '../auth/sessions.js';
import { TokenService } from '../auth/tokens.js';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import { acceptsOAuth } from '../oauth/scope.js';
import {
  type Bucket,
  MemoryRateLimitStore,
  type RateClass,
  type RateLimitResult,
  type RateLimitStore,
} from '../ratelimit.js';
import { RedisRateLimitStore } from '../ratelimit-redis.js';

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService;
    sessions: SessionService;
    rateLimitStore: RateLimitStore;
    /** Seals secrets kept in the database (signing keys, the authorization server's own keys). */
    secretBox: SecretBox;
    /** Counts and logs a failed authentication from the request's IP; throws 429 past the limit. */
    authFailed(request: FastifyRequest, reason: string): Promise<void>;
    /** Throws 429 when the request's IP is past its failed-authentication limit. */
    authAllowed(request: FastifyRequest): Promise<void>;
  }
  interface FastifyRequest {
    credential: Credential;
  }
  interface FastifyContextConfig {
    access?: Access;
    rateClass?: RateClass;
    /**
     * The route reads its own `Authorization` header (the OAuth endpoints: HTTP Basic client
     * authentication); no platform credential is resolved and the caller counts as anonymous.
     */
    ownCredentials?: boolean;
  }
}

/** Refusals of credentials that were genuine once; not counted as failed authentications. */
const GENUINE_BUT_STALE = new Set(['Token expired', 'Session has been signed out']);

/** The bucket and its identity for a request: API key, user (per app for OAuth), or client IP. */
function bucketOf(request: FastifyRequest, cls: RateClass, config: Config): [Bucket, string] | null {
  const limits = config.rateLimits[cls];
  const byCredential = bucketByCredential(request, limits);
  // A class without a limit for this kind of caller (sign-in counts only per IP) counts by IP.
  return byCredential ?? (limits.ip ? ['ip', request.ip] : null);
}

function bucketByCredential(
  request: FastifyRequest,
  limits: Config['rateLimits'][RateClass],
): [Bucket, string] | null {
  const c = request.credential;
  switch (c.type) {
    case 'user':
      return limits.user ? ['user', `u${c.user.id}`] : null;
    case 'oauth':
      // A rider's own limit, in a bucket separate for each app acting for them.
      return limits.user ? ['user', `u${c.user.id}:${c.clientId}`] : null;
    case 'key':
      // Publishable keys ship inside browsers and apps: their callers are counted by IP.
      if (c.key.kind === 'publishable' && limits.ip) return ['ip', request.ip];
      return limits.key ? ['key', `k${c.key.id}`] : null;
    case 'anonymous':
      return limits.ip ? ['ip', request.ip] : null;
  }
}

export default fp(
  async (
    app: FastifyInstance,
    { config, rateLimitStore }: { config: Config; rateLimitStore?: RateLimitStore },
  ) => {
    const issuer = `${config.publicUrl.replace(/\/$/, '')}/auth/v1`;
    const box = SecretBox.load(config.secretKey);
    const tokens = await TokenService.create(app.repos, issuer, box, config.externalIdp ?? undefined);
    const resolver = new CredentialResolver(app.repos, tokens);
    let store: RateLimitStore;
    if (rateLimitStore) {
      store = rateLimitStore;
    } else if (config.redisUrl) {
      // Several processes share the windows; start-up waits for Redis (a store configured but
      // unreachable at start is a deployment error, not a reason to count per process).
      const redis = new RedisRateLimitStore(config.redisUrl);
      try {
        await redis.ready();
      } catch (err) {
        redis.close();
        throw err;
      }
      app.log.info('rate limits shared through Redis');
      store = redis;
    } else {
      store = new MemoryRateLimitStore();
    }
    // A shared store that fails mid-run (Redis restarting) lets requests through uncounted rather
    // than failing them: routing stays up; the error is logged at most every 10 s.
    let lastStoreError = 0;
    const counted = async (
      request: FastifyRequest,
      count: () => Promise<RateLimitResult> | RateLimitResult,
    ): Promise<RateLimitResult | null> => {
      try {
        return await count();
      } catch (err) {
        if (Date.now() - lastStoreError > 10_000) {
          lastStoreError = Date.now();
          request.log.error({ err }, 'rate-limit store unavailable: requests pass uncounted');
        }
        return null;
      }
    };
    app.decorate('secretBox', box);
    app.decorate('tokens', tokens);
    app.decorate('sessions', new SessionService(app.repos, tokens, config.refreshTokenDays));
    app.decorate('rateLimitStore', store);
    // Set by the hook below before any handler runs.
    app.decorateRequest('credential', null as never);

    // The endpoints OAuth access tokens work on get the rule wherever they are declared.
    app.addHook('onRoute', (route) => {
      if (!acceptsOAuth(route.method, route.url)) return;
      const config = (route.config ?? {}) as { access?: Access };
      route.config = { ...config, access: { ...config.access, oauth: 'accept' } } as typeof route.config;
    });

    const failures = config.rateLimits.auth_failures.ip;
    const tooMany = (resetSeconds: number) =>
      new HttpError(
        429,
        'Too many failed authentications',
        'from this address; wait before trying again',
        { retry_after_seconds: resetSeconds },
        { 'Retry-After': String(resetSeconds) },
      );
    app.decorate('authAllowed', async (request: FastifyRequest) => {
      if (!failures || !store.peek) return;
      const peek = store.peek.bind(store);
      const r = await counted(request, () => peek(`auth_failures:ip:${request.ip}`, failures[0]));
      if (r && !r.allowed) throw tooMany(r.resetSeconds);
    });
    app.decorate('authFailed', async (request: FastifyRequest, reason: string) => {
      if (!failures) {
        request.log.warn({ ip: request.ip, reason }, 'authentication failed');
        return;
      }
      const r = await counted(request, () =>
        store.hit(`auth_failures:ip:${request.ip}`, failures[0], failures[1]),
      );
      if (!r) return;
      request.log.warn(
        { ip: request.ip, reason, failures_left: r.remaining },
        r.remaining > 0 ? 'authentication failed' : 'authentication failed; address blocked',
      );
      if (!r.allowed) throw tooMany(r.resetSeconds);
    });

    app.addHook('onRequest', async (request, reply) => {
      // Unknown paths go straight to the 404 handler. (`routeOptions` is rebuilt on every read.)
      const route = request.routeOptions;
      if (!route.url) return;
      const routeConfig = route.config;
      const h = request.headers;
      // An address past its failed-authentication limit is refused before any credential is tried,
      // the OAuth endpoints' own client credentials (HTTP Basic) included.
      if (h.authorization || h.apikey) await app.authAllowed(request);
      if (routeConfig.ownCredentials) {
        request.credential = { type: 'anonymous' };
      } else {
        try {
          request.credential = await resolver.resolve(request);
        } catch (err) {
          // An expired token or one of a signed-out session (or ended OAuth grant) was signed here:
          // a stale client, not a guess.
          const stale = err instanceof HttpError && GENUINE_BUT_STALE.has(err.message);
          if (err instanceof HttpError && err.statusCode === 401 && !stale) {
            await app.authFailed(request, err.message);
          }
          throw err;
        }
      }
      authorize(routeConfig.access, request.credential);
      const cls = routeConfig.rateClass;
      if (!cls) return;
      const bucket = bucketOf(request, cls, config);
      if (!bucket) return;
      const [kind, id] = bucket;
      const [limit, windowSeconds] = config.rateLimits[cls][kind] as [number, number];
      const r = await counted(request, () => store.hit(`${cls}:${kind}:${id}`, limit, windowSeconds));
      if (!r) return;
      reply.header('X-RateLimit-Limit', String(r.limit));
      reply.header('X-RateLimit-Remaining', String(r.remaining));
      reply.header('X-RateLimit-Reset', String(r.resetSeconds));
      if (!r.allowed) {
        throw new HttpError(
          429,
          'Rate limit exceeded',
          undefined,
          { retry_after_seconds: r.resetSeconds },
          {
            'Retry-After': String(r.resetSeconds),
          },
        );
      }
    });

    app.addHook('onClose', async () => store.close?.());
  },
  { name: 'auth', dependencies: ['storage'] },
);
