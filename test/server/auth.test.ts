// Credentials, sessions, rate limits, error shapes and versions (issue: credentials and the
// platform's frame). Routes that later issues add are stood in for by small test routes registered
// with the same access rules, so every rule is exercised now.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { keysCommand, usersCommand } from '../../server/src/commands/admin.js';
import { type Config, loadConfig } from '../../server/src/config.js';
import { openStore } from '../../server/src/db/database.js';
import { storeEnv, testConfig } from '../helpers.js';

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/** Builds the app with stand-in routes for the access rules of endpoints to come. */
async function appWithTestRoutes(config: Config): Promise<FastifyInstance> {
  const app = await buildApp({ config });
  // Like the routing endpoints: app and partner keys, users, OAuth tokens; explain's 10/min limit.
  app.post(
    '/test/routing/',
    { config: { access: { allow: ['app', 'partner', 'user'], oauth: 'accept' }, rateClass: 'explain' } },
    async (req) => ({
      caller: req.credential.type,
    }),
  );
  // Like place search and weather: users, publishable and service keys.
  app.get(
    '/test/functions/',
    { config: { access: { allow: ['user', 'publishable', 'service'], oauth: 'forbid' } } },
    async () => ({ ok: true }),
  );
  // Like the profile endpoints: user sessions only, OAuth refused with 401.
  app.get('/test/profile/', { config: { access: { allow: ['user'], oauth: 'reject' } } }, async () => ({
    ok: true,
  }));
  app.get('/test/boom/', { config: { access: { public: true } } }, async () => {
    throw new Error('secret internal detail');
  });
  await app.ready();
  return app;
}

async function signUp(app: FastifyInstance, email: string, password = 'correct horse battery') {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/signup',
    payload: { email, password, name: email.split('@')[0] },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { access_token: string; refresh_token: string; user: { identity_user_id: string } };
}

describe('credentials', () => {
  let app: FastifyInstance;
  let config: Config;
  let adminToken: string;
  let appKey: string;

  beforeAll(async () => {
    config = testConfig();
    app = await appWithTestRoutes(config);
    await signUp(app, 'admin@example.org');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(usersCommand(config, ['promote', 'admin@example.org'])).toBe(0);
    log.mockRestore();
    const res = await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      payload: { email: 'admin@example.org', password: 'correct horse battery' },
    });
    expect(res.statusCode).toBe(200);
    adminToken = res.json().access_token;
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/keys/',
      headers: bearer(adminToken),
      payload: { kind: 'app', name: 'Test app' },
    });
    expect(created.statusCode).toBe(201);
    appKey = created.json().key;
  });
  afterAll(() => app.close());

  it('answers a protected endpoint without credentials with the exact 401 body', async () => {
    for (const url of ['/test/profile/', '/api/admin/keys/']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication credentials were not provided.' });
    }
  });

  it('accepts an API key as Bearer and as the apikey header', async () => {
    for (const headers of [bearer(appKey), { apikey: appKey }]) {
      const res = await app.inject({ method: 'POST', url: '/test/routing/', headers, payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ caller: 'key' });
    }
  });

  it('names the accepted credentials when the kind is wrong', async () => {
    const res = await app.inject({ method: 'GET', url: '/test/functions/', headers: bearer(appKey) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Endpoint requires one of: user, service' });
    const profile = await app.inject({ method: 'GET', url: '/test/profile/', headers: { apikey: appKey } });
    expect(profile.json()).toEqual({ error: 'Endpoint requires one of: user' });
  });

  it('refuses unknown keys, and a revoked key from the very next request', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/test/routing/',
      headers: bearer('qw_app_nonsense'),
      payload: {},
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual({ error: 'Invalid API key' });
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/keys/',
      headers: bearer(adminToken),
      payload: { kind: 'partner', name: 'City data', source: 'city_dot' },
    });
    const { key, id, source } = created.json();
    expect(source).toBe('city_dot');
    expect(
      (await app.inject({ method: 'POST', url: '/test/routing/', headers: bearer(key), payload: {} }))
        .statusCode,
    ).toBe(200);
    const revoked = await app.inject({
      method: 'DELETE',
      url: `/api/admin/keys/${id}/`,
      headers: bearer(adminToken),
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().key.revoked_at).toEqual(expect.any(String));
    const after = await app.inject({
      method: 'POST',
      url: '/test/routing/',
      headers: bearer(key),
      payload: {},
    });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'Invalid API key' });
  });

  it('refuses a key revoked by the admin CLI (another database connection) from the next request on', async () => {
    const config = testConfig();
    const running = await appWithTestRoutes(config);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(keysCommand(config, ['create', '--kind', 'app', '--name', 'Cli app'])).toBe(0);
      const id = /key #(\d+)/.exec(log.mock.calls.map((c) => String(c[0])).join('\n'))?.[1];
      const key = String(log.mock.calls.at(-1)?.[0]);
      const call = () =>
        running.inject({ method: 'POST', url: '/test/routing/', headers: { apikey: key }, payload: {} });
      // Looked up once (and kept in the server's key cache).
      expect((await call()).statusCode).toBe(200);
      expect((await call()).statusCode).toBe(200);
      expect(keysCommand(config, ['revoke', String(id)])).toBe(0);
      // The server notices another process's commit within a millisecond.
      await new Promise((r) => setTimeout(r, 2));
      const after = await call();
      expect(after.statusCode).toBe(401);
      expect(after.json()).toEqual({ error: 'Invalid API key' });
    } finally {
      log.mockRestore();
      await running.close();
    }
  });

  it('lists keys without their secrets, and checks partner slugs', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/admin/keys/', headers: bearer(adminToken) });
    expect(res.statusCode).toBe(200);
    expect(JSON.stringify(res.json())).not.toContain(appKey);
    const bad = await app.inject({
      method: 'POST',
      url: '/api/admin/keys/',
      headers: bearer(adminToken),
      payload: { kind: 'partner', name: 'x', source: 'Not A Slug' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^source: /);
  });

  it('keeps the admin API to admins', async () => {
    const rider = await signUp(app, 'rider@example.org');
    const res = await app.inject({
      method: 'GET',
      url: '/api/admin/keys/',
      headers: bearer(rider.access_token),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Admin role required' });
  });

  it('refuses malformed, forged and expired tokens with 401', async () => {
    const malformed = await app.inject({
      method: 'GET',
      url: '/test/profile/',
      headers: bearer('not.a.jwt'),
    });
    expect(malformed.statusCode).toBe(401);
    expect(malformed.json()).toEqual({ error: 'Invalid token' });
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sid: 'x', role: 'admin' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(app.tokens.getIssuer())
      .setAudience('quietway')
      .setSubject('someone')
      .setExpirationTime('1h')
      .sign(other.privateKey);
    const f = await app.inject({ method: 'GET', url: '/test/profile/', headers: bearer(forged) });
    expect(f.statusCode).toBe(401);
    expect(f.json()).toEqual({ error: 'Invalid token' });
    const user = app.repos.users.byEmail('admin@example.org');
    if (!user) throw new Error('no admin');
    const sid = app.repos.sessions.create(user.id, null);
    const expired = await app.tokens.issueAccessToken(user, sid, null, -60);
    const e = await app.inject({ method: 'GET', url: '/test/profile/', headers: bearer(expired) });
    expect(e.statusCode).toBe(401);
    expect(e.json()).toEqual({ error: 'Token expired' });
    const header = await app.inject({
      method: 'GET',
      url: '/test/profile/',
      headers: { authorization: 'Basic abc' },
    });
    expect(header.statusCode).toBe(401);
  });

  it('treats OAuth access tokens per endpoint: accepted, 401 where documented, 403 elsewhere', async () => {
    const user = app.repos.users.byEmail('rider@example.org');
    if (!user) throw new Error('no rider');
    const sid = app.repos.sessions.create(user.id, 'client-abc');
    const token = await app.tokens.issueAccessToken(user, sid, 'client-abc');
    const ok = await app.inject({
      method: 'POST',
      url: '/test/routing/',
      headers: bearer(token),
      payload: {},
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ caller: 'oauth' });
    const reject = await app.inject({ method: 'GET', url: '/test/profile/', headers: bearer(token) });
    expect(reject.statusCode).toBe(401);
    expect(reject.json()).toEqual({ error: 'OAuth access tokens are not accepted by this endpoint' });
    const forbid = await app.inject({ method: 'GET', url: '/test/functions/', headers: bearer(token) });
    expect(forbid.statusCode).toBe(403);
    expect(forbid.json()).toEqual({ error: 'OAuth access tokens are not permitted on this endpoint' });
  });

  it('keeps v1 to legacy keys and marks it deprecated', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/directions/',
      headers: bearer(appKey),
      payload: {
        coordinates: [
          [-74.0, 40.7],
          [-74.01, 40.71],
        ],
      },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'This API version is closed to new integrations' });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(keysCommand(config, ['create', '--kind', 'app', '--name', 'Old app', '--legacy-v1'])).toBe(0);
    const legacyKey = String(log.mock.calls.at(-1)?.[0]);
    log.mockRestore();
    // Past the access rule: no city graph is loaded here, so routing answers 503.
    const ok = await app.inject({
      method: 'POST',
      url: '/directions/',
      headers: bearer(legacyKey),
      payload: {
        coordinates: [
          [-74.0, 40.7],
          [-74.01, 40.71],
        ],
      },
    });
    expect(ok.statusCode).toBe(503);
    expect(ok.headers.deprecation).toMatch(/^@\d+$/);
    expect(ok.headers.link).toBe('</directions/v2/>; rel="successor-version"');
  });
});

describe('sessions', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWithTestRoutes(testConfig());
  });
  afterAll(() => app.close());

  it('signs up, signs in and tells who is signed in', async () => {
    const s = await signUp(app, 'Ada@Example.org');
    const me = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email: 'Ada@Example.org', role: 'user' });
    const dup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'ada@example.org', password: 'another password', name: 'Ada' },
    });
    expect(dup.statusCode).toBe(409);
    const wrong = await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      payload: { email: 'ada@example.org', password: 'wrong password' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ error: 'Invalid email or password' });
    const short = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'b@example.org', password: 'short', name: 'B' },
    });
    expect(short.statusCode).toBe(400);
    expect(short.json().error).toMatch(/^password: /);
  });

  it('rotates refresh tokens and revokes the family when a rotated one is replayed', async () => {
    const s = await signUp(app, 'grace@example.org');
    const refresh = (token: string) =>
      app.inject({
        method: 'POST',
        url: '/auth/v1/token?grant_type=refresh_token',
        payload: { refresh_token: token },
      });
    const r1 = await refresh(s.refresh_token);
    expect(r1.statusCode).toBe(200);
    const next = r1.json();
    expect(next.refresh_token).not.toBe(s.refresh_token);
    // The old token again: a replay. The whole session ends, including the newest tokens.
    const replay = await refresh(s.refresh_token);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual({ error: 'Refresh token already used; the session has been revoked' });
    expect((await refresh(next.refresh_token)).statusCode).toBe(400);
    const me = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(next.access_token) });
    expect(me.statusCode).toBe(401);
  });

  it("signs out: the session's tokens stop working", async () => {
    const s = await signUp(app, 'linus@example.org');
    const out = await app.inject({ method: 'POST', url: '/auth/v1/logout', headers: bearer(s.access_token) });
    expect(out.statusCode).toBe(204);
    expect(
      (await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) })).statusCode,
    ).toBe(401);
    const r = await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=refresh_token',
      payload: { refresh_token: s.refresh_token },
    });
    expect(r.statusCode).toBe(400);
  });

  it('keeps accounts, keys and signing keys across a restart', async () => {
    const config = testConfig();
    const first = await buildApp({ config });
    const s = await signUp(first, 'hedy@example.org');
    await first.close();
    const second = await buildApp({ config });
    // The same signing key: a token from before the restart still verifies.
    const me = await second.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().email).toBe('hedy@example.org');
    await second.close();
  });

  it('publishes the signing keys as JWKS', async () => {
    const res = await app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    const { keys } = res.json();
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(keys[0].d).toBeUndefined();
  });
});

describe('rate limits, errors and versions', () => {
  it('answers 429 with Retry-After and the spec body past the limit, counting per key', async () => {
    const config = testConfig({ QUIETWAY_RATE_LIMITS: JSON.stringify({ explain: { key: [3, 60] } }) });
    const app = await appWithTestRoutes(config);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    keysCommand(config, ['create', '--kind', 'app', '--name', 'a']);
    const keyA = String(log.mock.calls.at(-1)?.[0]);
    keysCommand(config, ['create', '--kind', 'app', '--name', 'b']);
    const keyB = String(log.mock.calls.at(-1)?.[0]);
    log.mockRestore();
    const call = (key: string) =>
      app.inject({ method: 'POST', url: '/test/routing/', headers: { apikey: key }, payload: {} });
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(keyA);
      expect(res.statusCode).toBe(200);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await call(keyA);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const retry = Number(limited.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(limited.json()).toEqual({ error: 'Rate limit exceeded', retry_after_seconds: retry });
    // Another key has its own bucket.
    expect((await call(keyB)).statusCode).toBe(200);
    await app.close();
  });

  it('answers wrong methods with 405 and Allow, unknown versions with 404, failures with a bare 500', async () => {
    const app = await appWithTestRoutes(testConfig());
    const wrong = await app.inject({ method: 'GET', url: '/auth/v1/signup' });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(wrong.json()).toEqual({ error: 'Method not allowed' });
    const unknown = await app.inject({ method: 'POST', url: '/directions/v7/', payload: {} });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Unknown endpoint or API version' });
    const boom = await app.inject({ method: 'GET', url: '/test/boom/' });
    expect(boom.statusCode).toBe(500);
    expect(boom.json()).toEqual({ error: 'Internal server error' });
    expect(boom.body).not.toContain('secret');
    const badJson = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toEqual({ error: 'Invalid JSON' });
    await app.close();
  });

  it('answers retired versions with 410 and the successor', async () => {
    // No stand-in routes here: a retired endpoint answers 410 even once its code is gone.
    const app = await buildApp({
      config: testConfig({ QUIETWAY_RETIRED_ENDPOINTS: 'POST /directions/, POST /multi-modal/' }),
    });
    const res = await app.inject({ method: 'POST', url: '/directions/', payload: {} });
    expect(res.statusCode).toBe(410);
    expect(res.json()).toEqual({
      error: 'API version retired',
      details: '/directions/ was retired; use /directions/v2/',
    });
    const gone = await app.inject({ method: 'POST', url: '/multi-modal', payload: {} });
    expect(gone.statusCode).toBe(410);
    await app.close();
  });

  it('publishes an OpenAPI document generated from the schemas', async () => {
    const app = await appWithTestRoutes(testConfig());
    const res = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/auth/v1/signup', '/api/admin/keys/', '/health/']),
    );
    expect(doc.paths['/auth/v1/signup'].post.requestBody).toBeDefined();
    const ui = await app.inject({ method: 'GET', url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/html/);
    await app.close();
  });
});

describe('an external identity provider', () => {
  const issuer = 'https://id.example.org/';
  const audience = 'quietway-test';
  let server: http.Server;
  let app: FastifyInstance;
  let config: Config;
  let sign: (claims: {
    sub: string;
    aud?: string | string[];
    email?: string;
    role?: string;
  }) => Promise<string>;
  let admin: { identity_user_id: string };

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'ext-1', alg: 'RS256' };
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    sign = ({ sub, aud, ...claims }) => {
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'ext-1' })
        .setIssuer(issuer)
        .setSubject(sub)
        .setExpirationTime('10m');
      if (aud !== undefined) jwt.setAudience(aud);
      return jwt.sign(privateKey);
    };
    config = testConfig({
      QUIETWAY_EXTERNAL_JWT_ISSUER: issuer,
      QUIETWAY_EXTERNAL_JWKS_URL: `http://127.0.0.1:${port}/jwks`,
      QUIETWAY_EXTERNAL_JWT_AUDIENCE: audience,
    });
    app = await appWithTestRoutes(config);
    admin = (await signUp(app, 'boss@example.org')).user;
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(usersCommand(config, ['promote', 'boss@example.org'])).toBe(0);
    log.mockRestore();
  });
  afterAll(async () => {
    await app.close();
    server.close();
  });

  it('needs the audience configured beside the issuer and JWKS URL', () => {
    expect(() =>
      testConfig({
        QUIETWAY_EXTERNAL_JWT_ISSUER: issuer,
        QUIETWAY_EXTERNAL_JWKS_URL: 'http://127.0.0.1:1/jwks',
      }),
    ).toThrow(/QUIETWAY_EXTERNAL_JWT_AUDIENCE/);
  });

  it("accepts its tokens and makes the rider's own account on first use", async () => {
    const token = await sign({ sub: 'rider-17', aud: audience, email: 'ext@example.org' });
    const me = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email: 'ext@example.org', role: 'user' });
    const again = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
    expect(again.json().identity_user_id).toBe(me.json().identity_user_id);
  });

  it("never becomes a local account by naming its identity_user_id, not even the admin's", async () => {
    const token = await sign({ sub: admin.identity_user_id, aud: audience, role: 'admin' });
    const me = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().identity_user_id).not.toBe(admin.identity_user_id);
    expect(me.json()).toMatchObject({ role: 'user' });
    expect(me.json().email).not.toBe('boss@example.org');
    const mint = await app.inject({
      method: 'POST',
      url: '/api/admin/keys/',
      headers: bearer(token),
      payload: { kind: 'app', name: 'stolen' },
    });
    expect(mint.statusCode).toBe(403);
    expect(mint.json()).toEqual({ error: 'Admin role required' });
  });

  it('keeps a provider email that a local account has from naming that account', async () => {
    const token = await sign({ sub: 'someone-else', aud: audience, email: 'boss@example.org' });
    const me = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().identity_user_id).not.toBe(admin.identity_user_id);
    expect(me.json()).toMatchObject({ role: 'user' });
    expect(me.json().email).toMatch(/@external\.invalid$/);
  });

  it('refuses tokens the provider issued for another audience, or for none', async () => {
    for (const aud of ['some-other-app', ['another', 'one'], undefined]) {
      const token = await sign({ sub: 'rider-17', aud });
      const res = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Invalid token' });
    }
  });

  it('carries admin rights only where an operator granted them to the (issuer, subject)', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const token = await sign({ sub: 'ops-1', aud: audience, email: 'ops@example.org' });
      await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(token) });
      // Promoting by the provider-supplied email is refused: it names no (issuer, subject).
      expect(usersCommand(config, ['promote', 'ops@example.org'])).toBe(1);
      expect(err.mock.calls.flat().join(' ')).toContain('--issuer');
      const before = await app.inject({
        method: 'GET',
        url: '/api/admin/keys/',
        headers: bearer(token),
      });
      expect(before.statusCode).toBe(403);
      expect(usersCommand(config, ['promote', '--issuer', issuer, '--subject', 'ops-1'])).toBe(0);
      const after = await app.inject({ method: 'GET', url: '/api/admin/keys/', headers: bearer(token) });
      expect(after.statusCode).toBe(200);
      // The same subject at our own issuer is someone else entirely (here: no one).
      const other = await sign({ sub: 'ops-2', aud: audience });
      const refused = await app.inject({ method: 'GET', url: '/api/admin/keys/', headers: bearer(other) });
      expect(refused.statusCode).toBe(403);
      expect(usersCommand(config, ['demote', '--issuer', issuer, '--subject', 'ops-1'])).toBe(0);
      const demoted = await app.inject({ method: 'GET', url: '/api/admin/keys/', headers: bearer(token) });
      expect(demoted.statusCode).toBe(403);
    } finally {
      log.mockRestore();
      err.mockRestore();
    }
  });
});

describe('failed authentications', () => {
  it('are logged and, past the limit, refused per address with 429 before any credential is tried', async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const config = testConfig({ QUIETWAY_RATE_LIMITS: '{"auth_failures":{"ip":[20,60]}}' });
    const app = await buildApp({ config, logger: { level: 'warn', stream } });
    await app.ready();
    const good = issueKey(app.repos, { kind: 'app', name: 'Good', source: null, legacyV1: false }).key;
    const sprayer = '203.0.113.7';
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const credential =
        i % 2 === 0 ? `qw_app_${'x'.repeat(10)}${i}` : `eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIke2l9In0.c2ln${i}`;
      const res = await app.inject({
        method: 'GET',
        url: '/auth/v1/user',
        headers: bearer(credential),
        remoteAddress: sprayer,
      });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(res.json()).toMatchObject({ error: 'Too many failed authentications' });
      }
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    // Even a good key is not tried from the blocked address; elsewhere it works.
    const blocked = await app.inject({
      method: 'GET',
      url: '/events/nearby/?latitude=40.7&longitude=-74',
      headers: { apikey: good },
      remoteAddress: sprayer,
    });
    expect(blocked.statusCode).toBe(429);
    const elsewhere = await app.inject({
      method: 'GET',
      url: '/events/nearby/?latitude=40.7&longitude=-74',
      headers: { apikey: good },
      remoteAddress: '198.51.100.1',
    });
    expect(elsewhere.statusCode).toBe(200);
    // An expired token of ours was genuine once: refused, but not counted as a guess.
    const staleUser = app.repos.users.create({
      email: 'stale@example.org',
      name: 'Stale',
      passwordHash: null,
    });
    const expired = await app.tokens.issueAccessToken(
      staleUser,
      app.repos.sessions.create(staleUser.id, null),
      null,
      -10,
    );
    for (let i = 0; i < 3; i++) {
      const stale = await app.inject({
        method: 'GET',
        url: '/auth/v1/user',
        headers: bearer(expired),
        remoteAddress: '198.51.100.9',
      });
      expect(stale.json()).toEqual({ error: 'Token expired' });
    }
    // Wrong passwords count too.
    const signIn = await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      payload: { email: 'nobody@example.org', password: 'not the password' },
      remoteAddress: sprayer,
    });
    expect(signIn.statusCode).toBe(429);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; ip?: string; reason?: string });
    const failed = logged.filter((l) => l.msg.startsWith('authentication failed'));
    expect(failed.some((l) => l.ip === '198.51.100.9')).toBe(false);
    expect(failed.length).toBe(20);
    expect(failed[0]).toMatchObject({ ip: sprayer, reason: 'Invalid API key' });
    expect(failed[1]).toMatchObject({ ip: sprayer, reason: 'Invalid token' });
    expect(failed.at(-1)?.msg).toBe('authentication failed; address blocked');
    await app.close();
  });
});

describe('signing keys at rest', () => {
  const rows = (config: Config) => {
    const db = openStore(config);
    try {
      return db.prepare('SELECT kid, private_jwk FROM signing_keys').all() as {
        kid: string;
        private_jwk: string;
      }[];
    } finally {
      db.close();
    }
  };
  const keyA = randomBytes(32).toString('base64');
  const keyB = randomBytes(32).toString('hex');

  it('are sealed under a key kept outside the database (a file made at first start)', async () => {
    const config = testConfig();
    const app = await buildApp({ config });
    await app.ready();
    await app.close();
    const stored = rows(config);
    expect(stored.length).toBe(1);
    expect(stored[0]?.private_jwk).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(stored[0]?.private_jwk).not.toContain('"d"');
    expect(fs.statSync(config.secretKey.file).mode & 0o777).toBe(0o600);
  });

  it('seals keys stored in plain text by earlier versions, and keeps their tokens valid', async () => {
    const config = testConfig({ QUIETWAY_SECRET_KEY: keyA });
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = 'legacy-kid';
    const db = openStore(config);
    db.prepare(
      "INSERT INTO signing_keys (kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')",
    ).run(
      kid,
      JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }),
      JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }),
    );
    db.close();
    const app = await buildApp({ config });
    const session = await signUp(app, 'legacy@example.org');
    expect(
      JSON.parse(Buffer.from(session.access_token.split('.')[0] as string, 'base64url').toString()).kid,
    ).toBe(kid);
    await app.close();
    expect(rows(config)[0]?.private_jwk).toMatch(/^enc:v1:/);
  });

  it('rotates: a new key with the old one as previous reseals everything; a wrong key stops the start', async () => {
    const config = testConfig({ QUIETWAY_SECRET_KEY: keyA });
    const first = await buildApp({ config });
    const session = await signUp(first, 'rotate@example.org');
    await first.close();
    const sealedA = rows(config)[0]?.private_jwk as string;

    const env = {
      QUIETWAY_DATA_DIR: config.dataDir,
      QUIETWAY_LOG_LEVEL: 'silent',
      ...storeEnv(config.dataDir),
    };
    const rotated = await buildApp({
      config: loadConfig({ ...env, QUIETWAY_SECRET_KEY: keyB, QUIETWAY_PREVIOUS_SECRET_KEYS: keyA }),
    });
    const me = await rotated.inject({
      method: 'GET',
      url: '/auth/v1/user',
      headers: bearer(session.access_token),
    });
    expect(me.statusCode).toBe(200);
    await rotated.close();
    const sealedB = rows(config)[0]?.private_jwk as string;
    expect(sealedB.slice(0, 16)).not.toBe(sealedA.slice(0, 16));

    const after = await buildApp({ config: loadConfig({ ...env, QUIETWAY_SECRET_KEY: keyB }) });
    expect(
      (await after.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(session.access_token) }))
        .statusCode,
    ).toBe(200);
    await after.close();

    await expect(buildApp({ config: loadConfig({ ...env, QUIETWAY_SECRET_KEY: keyA }) })).rejects.toThrow(
      /neither QUIETWAY_SECRET_KEY/,
    );
    await expect(buildApp({ config: loadConfig({ ...env, QUIETWAY_SECRET_KEY: 'short' }) })).rejects.toThrow(
      /32 random bytes/,
    );
  });
});
