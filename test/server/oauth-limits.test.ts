// OAuth 2.1 beside the hardening of issue 26: an app's access tokens are genuine credentials and
// never count as failed authentications (wherever they are used, expired, or of an ended grant);
// wrong client secrets and wrong passwords on the sign-in page do count, and past the limit the
// address is refused there too; the token endpoint reads its own form body under its own cap, not
// the JSON body limits; the signing keys the authorization server uses are sealed at rest; on a full
// disk the token endpoint answers 503 temporarily_unavailable and /health/ says the store is full.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createLocalJWKSet, decodeJwt, importJWK, jwtVerify, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../server/src/auth/sealing.js';
import { openStore } from '../../server/src/db/database.js';
import { tempDir } from '../helpers.js';
import { FormBrowser } from './oauth-client.js';
import { type OAuthServer, RIDER, registerApp, startOAuthServer } from './oauth-setup.js';

const CALLBACK = 'http://localhost:5999/callback';
const FAILURES = 3;
const insecure = { execute: [oidc.allowInsecureRequests] };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

let s: OAuthServer;
let publicApp: { client_id: string };
let confidentialApp: { client_id: string; client_secret: string | null };

beforeAll(async () => {
  s = await startOAuthServer({
    env: {
      QUIETWAY_RATE_LIMITS: JSON.stringify({
        auth: { ip: [10_000, 60] },
        auth_failures: { ip: [FAILURES, 60] },
      }),
      // The smallest JSON limits there are: the token endpoint and the pages must not depend on them.
      QUIETWAY_MAX_BODY_BYTES: '1024',
      QUIETWAY_MAX_ROUTING_BODY_BYTES: '1024',
    },
  });
  publicApp = await registerApp(s, { name: 'Bike Buddy', type: 'public', redirect_uris: [CALLBACK] });
  confidentialApp = await registerApp(s, {
    name: 'Courier Desk',
    type: 'confidential',
    redirect_uris: ['https://courier.example.com/cb'],
  });
}, 180_000);
afterAll(() => s?.close());

const discover = (clientId: string, auth?: oidc.ClientAuth) =>
  oidc.discovery(new URL(s.issuer), clientId, undefined, auth ?? oidc.None(), insecure);

async function tokensFor(config: oidc.Configuration, redirectUri = CALLBACK) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await new FormBrowser(s.base).authorize(url.href, RIDER);
  return oidc.authorizationCodeGrant(config, new URL(callback), {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
}

/** A refresh request of the confidential app with HTTP Basic client authentication. */
const basicTokenRequest = (secret: string) =>
  fetch(`${s.issuer}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${confidentialApp.client_id}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=refresh_token&refresh_token=no-such-refresh-token',
  });

/** How many failed authentications 127.0.0.1 has left in this window. */
async function failuresLeft(): Promise<number> {
  const store = s.app.rateLimitStore;
  const r = await (store.peek?.('auth_failures:ip:127.0.0.1', FAILURES) ?? { remaining: -1 });
  return r.remaining;
}

describe('OAuth beside the failed-authentication limit', () => {
  it('uses the sealed signing keys: tokens verify against the JWKS, the database holds no plain key nor refresh token', async () => {
    const tokens = await tokensFor(await discover(publicApp.client_id));
    const jwks = (await (await fetch(`${s.issuer}/.well-known/jwks.json`)).json()) as Parameters<
      typeof createLocalJWKSet
    >[0];
    const { payload } = await jwtVerify(tokens.access_token, createLocalJWKSet(jwks), {
      issuer: s.issuer,
      audience: 'quietway',
    });
    expect(payload.client_id).toBe(publicApp.client_id);
    for (const k of s.app.repos.signingKeys.all()) expect(SecretBox.isSealed(k.privateJwk)).toBe(true);
    // Refresh tokens (and codes) are stored as digests: the database holds no value that works.
    const db = openStore(s.config);
    try {
      const rows = db.prepare('SELECT model, id, payload FROM oauth_artefacts').all() as {
        model: string;
        id: string;
        payload: string;
      }[];
      expect(rows.some((r) => r.model === 'RefreshToken')).toBe(true);
      const everything = JSON.stringify(rows);
      expect(everything).not.toContain(tokens.refresh_token as string);
    } finally {
      db.close();
    }
    // …and it still works.
    const refreshed = await oidc.refreshTokenGrant(
      await discover(publicApp.client_id),
      tokens.refresh_token as string,
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  });

  it('never counts an app’s access token as a failed authentication: in scope, out of scope, expired, or of an ended grant', async () => {
    const { access_token: token, refresh_token: refresh } = await tokensFor(
      await discover(publicApp.client_id),
    );
    const before = await failuresLeft();
    expect(before).toBe(FAILURES);
    for (let i = 0; i < FAILURES + 2; i++) {
      // Past authentication and into the handler: no body, so the spec's first 400.
      const ok = await fetch(`${s.base}/explain-supersafe/`, { method: 'POST', headers: bearer(token) });
      expect(ok.status).toBe(400);
      expect(((await ok.json()) as { error: string }).error).toBe(
        'origin and destination must be [lon, lat] arrays',
      );
      expect((await fetch(`${s.base}/user/`, { headers: bearer(token) })).status).toBe(401);
      expect((await fetch(`${s.base}/api/admin/oauth-clients/`, { headers: bearer(token) })).status).toBe(
        403,
      );
    }
    // Expired: signed here once, so a stale client rather than a guess.
    const claims = decodeJwt(token);
    const key = s.app.repos.signingKeys.active()[0];
    const jwk = JSON.parse(s.app.secretBox.open(key?.privateJwk as string));
    const expired = await new SignJWT({
      ...claims,
      iat: (claims.iat as number) - 7200,
      exp: (claims.iat as number) - 3600,
    })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
      .sign(await importJWK(jwk, 'ES256'));
    // The app ends its grant: its access token is refused as one of a signed-out session.
    const revoked = await fetch(`${s.issuer}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refresh as string, client_id: publicApp.client_id }).toString(),
    });
    expect(revoked.status).toBe(200);
    for (let i = 0; i < FAILURES + 2; i++) {
      const old = await fetch(`${s.base}/explain-supersafe/`, { method: 'POST', headers: bearer(expired) });
      expect(old.status).toBe(401);
      expect(await old.json()).toEqual({ error: 'Token expired' });
      const ended = await fetch(`${s.base}/explain-supersafe/`, { method: 'POST', headers: bearer(token) });
      expect(ended.status).toBe(401);
      expect(await ended.json()).toEqual({ error: 'Session has been signed out' });
    }
    expect(await failuresLeft()).toBe(FAILURES);
  });

  it('reads token-endpoint form bodies under its own cap, past the JSON limits (and refuses a huge one with 400)', async () => {
    const config = await discover(publicApp.client_id);
    const tokens = await tokensFor(config);
    // A refresh request of 4 KiB, four times QUIETWAY_MAX_BODY_BYTES here: read by oidc-provider.
    const res = await fetch(`${s.issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: publicApp.client_id,
        padding: 'x'.repeat(4096),
      }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await res.json()) as Record<string, unknown>).toHaveProperty('access_token');
    const huge = await fetch(`${s.issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&padding=${'x'.repeat(100 * 1024)}`,
    });
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: string }).error).toBe('invalid_request');
    expect(await failuresLeft()).toBe(FAILURES);
  });

  it('counts wrong client secrets and wrong passwords on the sign-in page; past the limit, both are refused with 429', async () => {
    const secret = confidentialApp.client_secret as string;
    const wrong = await basicTokenRequest(`${secret}x`);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_client');
    expect(await failuresLeft()).toBe(FAILURES - 1);

    // A wrong password on the sign-in page of a login request.
    const config = await discover(publicApp.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const browser = new FormBrowser(s.base);
    const start = await browser.request(url.href);
    const page = await browser.request(start.headers.get('location') as string);
    const html = await page.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const signIn = /action="([^"]+\/sign-in)"/.exec(html)?.[1] as string;
    const bad = await browser.post(signIn, { csrf, email: RIDER.email, password: 'not-the-password' });
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain('The email or password is not right.');
    expect(await failuresLeft()).toBe(FAILURES - 2);

    // The last one allowed, a forged bearer token; then the address is blocked.
    const forged = await fetch(`${s.base}/explain-supersafe/`, { method: 'POST', headers: bearer('a.b.c') });
    expect(forged.status).toBe(401);
    expect(await failuresLeft()).toBe(0);

    const blockedPage = await browser.post(signIn, { csrf, ...RIDER });
    expect(blockedPage.status).toBe(429);
    expect(blockedPage.headers.get('content-type')).toMatch(/text\/html/);
    expect(blockedPage.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(blockedPage.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await blockedPage.text()).toContain('Too many failed sign-ins');

    const blockedToken = await basicTokenRequest(secret);
    expect(blockedToken.status).toBe(429);
    expect(((await blockedToken.json()) as { error: string }).error).toBe('Too many failed authentications');
  });
});

// As in disk.test.ts: a tmpfs the test fills, which needs root (or CAP_SYS_ADMIN); skipped elsewhere.
const MOUNT = tempDir('quietway-oauth-fulldisk-');
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', MOUNT], { encoding: 'utf8' });
if (mounted.status !== 0) {
  console.warn(
    `SKIPPED OAuth full-disk test: cannot mount a tmpfs at ${MOUNT} (${(mounted.stderr || mounted.error?.message || 'not permitted').trim()}); run the tests as root to include it`,
  );
}

describe.skipIf(mounted.status !== 0)('OAuth on a full disk', () => {
  let full: OAuthServer;
  const filler = path.join(MOUNT, 'filler.bin');
  beforeAll(async () => {
    // The disk that fills is the SQLite file's, on every pass: PostgreSQL's own disk_full (53100)
    // answers the same 503 (server/src/errors.ts isStorageFull).
    full = await startOAuthServer({ env: { QUIETWAY_DATA_DIR: MOUNT }, store: 'sqlite' });
  }, 180_000);
  afterAll(async () => {
    await full?.close();
    spawnSync('umount', [MOUNT]);
    fs.rmSync(MOUNT, { recursive: true, force: true });
  });

  it('answers refreshes with 503 temporarily_unavailable, not a server_error, and /health/ says the store is full', async () => {
    const app = await registerApp(full, { name: 'Full', type: 'public', redirect_uris: [CALLBACK] });
    const config = await oidc.discovery(
      new URL(full.issuer),
      app.client_id,
      undefined,
      oidc.None(),
      insecure,
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await new FormBrowser(full.base).authorize(url.href, RIDER);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: verifier,
    });

    // Fill the file system to its last byte.
    const fd = fs.openSync(filler, 'w');
    try {
      for (const size of [64 * 1024, 512]) {
        try {
          for (;;) fs.writeSync(fd, Buffer.alloc(size));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        }
      }
    } finally {
      fs.closeSync(fd);
    }
    // Each refresh rotates (writes); whatever room SQLite's WAL still had runs out within a few.
    let refresh = tokens.refresh_token as string;
    let res: Response | undefined;
    for (let i = 0; i < 200; i++) {
      res = await fetch(`${full.issuer}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refresh,
          client_id: app.client_id,
        }),
      });
      if (res.status !== 200) break;
      refresh = ((await res.json()) as { refresh_token: string }).refresh_token;
    }
    expect(res?.status).toBe(503);
    expect(await res?.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The server cannot save data right now (storage full); try again later.',
    });
    const health = await fetch(`${full.base}/health/`);
    expect(await health.json()).toMatchObject({ status: 'degraded', storage: { status: 'full' } });
    fs.rmSync(filler);
  });
});
