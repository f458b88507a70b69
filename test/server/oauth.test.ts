// OAuth 2.1 with PKCE (issue 16): the whole flow driven by a certified client library (openid-client)
// against the running server on 127.0.0.1, client registration by admin API and CLI, the scope of
// a token on the platform's endpoints, and the attacks, each of which must fail safely.

import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256 } from '../../server/src/auth/secrets.js';
import { oauthClientsCommand } from '../../server/src/commands/oauth-clients.js';
import { openStore } from '../../server/src/db/database.js';
import { redirectUriProblem } from '../../server/src/oauth/clients.js';
import { FormBrowser } from './oauth-client.js';
import { expireLoginRequest, type OAuthServer, RIDER, registerApp, startOAuthServer } from './oauth-setup.js';

const CALLBACK = 'http://localhost:5999/callback';
const OTHER_CALLBACK = 'https://app.example.org/oauth/done';
const TRIP = {
  coordinates: [
    [-74.0089, 40.70797],
    [-74.00863, 40.71196],
  ],
};

let s: OAuthServer;
let publicApp: { client_id: string };
let confidentialApp: { client_id: string; client_secret: string | null };
const insecure = { execute: [oidc.allowInsecureRequests] };

beforeAll(async () => {
  s = await startOAuthServer({ withGraph: true });
  publicApp = await registerApp(s, {
    name: 'Bike Buddy',
    type: 'public',
    redirect_uris: [CALLBACK, OTHER_CALLBACK],
  });
  confidentialApp = await registerApp(s, {
    name: 'Courier Desk',
    type: 'confidential',
    redirect_uris: ['https://courier.example.com/cb'],
  });
}, 180_000);
afterAll(() => s?.close());

async function discover(clientId: string, auth?: oidc.ClientAuth) {
  return oidc.discovery(new URL(s.issuer), clientId, undefined, auth ?? oidc.None(), insecure);
}

/** authorize → sign in → consent → code, with a fresh verifier and state. */
async function codeFor(
  config: oidc.Configuration,
  redirectUri = CALLBACK,
  decision: 'allow' | 'cancel' = 'allow',
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await new FormBrowser(s.base).authorize(url.href, { ...RIDER, decision });
  return { callback: new URL(callback), verifier, state, redirectUri };
}

async function tokensFor(config: oidc.Configuration, redirectUri = CALLBACK) {
  const c = await codeFor(config, redirectUri);
  return oidc.authorizationCodeGrant(config, c.callback, {
    pkceCodeVerifier: c.verifier,
    expectedState: c.state,
  });
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

async function directions(token: string) {
  return fetch(`${s.base}/directions/v2/`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(TRIP),
  });
}

/** The OAuth error a token request failed with. */
async function oauthError(
  p: Promise<unknown>,
): Promise<{ error: string; status: number; description: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { error?: string; status?: number; error_description?: string; cause?: unknown };
    // A 401 answer comes as a WWW-Authenticate challenge carrying the error.
    const challenge = Array.isArray(e.cause)
      ? (e.cause[0] as { parameters?: { error?: string; error_description?: string } }).parameters
      : undefined;
    return {
      error: e.error ?? challenge?.error ?? String(err),
      status: e.status ?? 0,
      description: e.error_description ?? challenge?.error_description ?? '',
    };
  }
  throw new Error('the request succeeded');
}

/** A raw token-endpoint request (to see the body and status the server answers). */
async function tokenRequest(form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('discovery', () => {
  it('publishes the metadata at the issuer, at RFC 8414 paths and at the root', async () => {
    for (const p of [
      '/auth/v1/.well-known/openid-configuration',
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/auth/v1',
    ]) {
      const res = await fetch(`${s.base}${p}`);
      expect(res.status, p).toBe(200);
      const m = (await res.json()) as Record<string, unknown>;
      expect(m.issuer).toBe(s.issuer);
      expect(m.authorization_endpoint).toBe(`${s.issuer}/oauth/authorize`);
      expect(m.token_endpoint).toBe(`${s.issuer}/oauth/token`);
      expect(m.jwks_uri).toBe(`${s.issuer}/.well-known/jwks.json`);
      expect(m.code_challenge_methods_supported).toEqual(['S256']);
      expect(m.response_types_supported).toEqual(['code']);
      expect(m.scopes_supported).toEqual(['openid', 'email']);
      expect(m.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
      expect(m.authorization_response_iss_parameter_supported).toBe(true);
    }
  });
});

describe('the whole flow (openid-client)', () => {
  it('authorize → sign in → consent → code → token → directions → refresh → replay refused, family revoked', async () => {
    const config = await discover(publicApp.client_id);
    const c = await codeFor(config);
    expect(c.callback.origin + c.callback.pathname).toBe(CALLBACK);
    expect(c.callback.searchParams.get('state')).toBe(c.state);
    expect(c.callback.searchParams.get('iss')).toBe(s.issuer);
    const tokens = await oidc.authorizationCodeGrant(config, c.callback, {
      pkceCodeVerifier: c.verifier,
      expectedState: c.state,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('openid email');
    // The ID token was verified by openid-client against the JWKS; it names the rider.
    const idClaims = tokens.claims();
    expect(idClaims?.email).toBe(RIDER.email);
    expect(idClaims?.aud).toBe(publicApp.client_id);
    expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe('ES256');
    // …and its signature checks out against the published JWKS.
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string));
    const verified = await jwtVerify(tokens.id_token as string, jwks, {
      issuer: s.issuer,
      audience: publicApp.client_id,
      algorithms: ['ES256'],
    });
    expect(verified.payload.sub).toBe(idClaims?.sub);
    // The access token: an ES256 JWT for this API, under an hour.
    expect(decodeProtectedHeader(tokens.access_token).alg).toBe('ES256');
    const at = decodeJwt(tokens.access_token);
    expect(at.iss).toBe(s.issuer);
    expect(at.client_id).toBe(publicApp.client_id);
    expect((at.exp as number) - (at.iat as number)).toBeLessThanOrEqual(3600);

    const routed = await directions(tokens.access_token);
    expect(routed.status).toBe(200);
    expect(((await routed.json()) as { route: unknown }).route).not.toBeNull();

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.id_token).toBeTruthy();
    expect((await directions(refreshed.access_token)).status).toBe(200);

    // The rotated refresh token presented again: refused, and the whole family with it.
    const replay = await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token as string));
    expect(replay.error).toBe('invalid_grant');
    const family = await oauthError(oidc.refreshTokenGrant(config, refreshed.refresh_token as string));
    expect(family.error).toBe('invalid_grant');
    const after = await directions(refreshed.access_token);
    expect(after.status).toBe(401);
  });

  it('answers token errors with {error, error_description}', async () => {
    const bad = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: 'not-a-token',
      client_id: publicApp.client_id,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    const unknown = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'qwc_nobody',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('counts a token against the rider’s own limit in a bucket for the app', async () => {
    const config = await discover(publicApp.client_id);
    const tokens = await tokensFor(config);
    const viaApp = await directions(tokens.access_token);
    const viaRider = await directions(s.riderToken);
    const viaApp2 = await directions(tokens.access_token);
    const remaining = (r: Response) => Number(r.headers.get('x-ratelimit-remaining'));
    expect(remaining(viaApp2)).toBe(remaining(viaApp) - 1);
    expect(remaining(viaRider)).not.toBe(remaining(viaApp2));
  });

  it('cancel on the consent page redirects with error=access_denied, error_description and state', async () => {
    const config = await discover(publicApp.client_id);
    const c = await codeFor(config, OTHER_CALLBACK, 'cancel');
    expect(c.callback.origin + c.callback.pathname).toBe(OTHER_CALLBACK);
    expect(c.callback.searchParams.get('error')).toBe('access_denied');
    expect(c.callback.searchParams.get('error_description')).toBeTruthy();
    expect(c.callback.searchParams.get('state')).toBe(c.state);
    expect(c.callback.searchParams.get('code')).toBeNull();
  });
});

describe('confidential apps', () => {
  it('authenticate with HTTP Basic; a wrong secret is invalid_client; a new secret stops refresh tokens', async () => {
    const secret = confidentialApp.client_secret as string;
    expect(secret).toMatch(/^qwcs_/);
    const config = await discover(confidentialApp.client_id, oidc.ClientSecretBasic(secret));
    const c = await codeFor(config, 'https://courier.example.com/cb');
    const tokens = await oidc.authorizationCodeGrant(config, c.callback, {
      pkceCodeVerifier: c.verifier,
      expectedState: c.state,
    });
    expect((await directions(tokens.access_token)).status).toBe(200);

    const wrong = await discover(confidentialApp.client_id, oidc.ClientSecretBasic(`${secret}x`));
    const e = await oauthError(oidc.refreshTokenGrant(wrong, tokens.refresh_token as string));
    expect(e.error).toBe('invalid_client');
    // Without any authentication (as a public app would): refused too.
    const none = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: confidentialApp.client_id,
    });
    expect(none.body.error).toBe('invalid_client');

    const rotated = await fetch(`${s.base}/api/admin/oauth-clients/${confidentialApp.client_id}/secret/`, {
      method: 'POST',
      headers: bearer(s.adminToken),
    });
    expect(rotated.status).toBe(200);
    const newSecret = ((await rotated.json()) as { client_secret: string }).client_secret;
    expect(newSecret).not.toBe(secret);
    const fresh = await discover(confidentialApp.client_id, oidc.ClientSecretBasic(newSecret));
    const stopped = await oauthError(oidc.refreshTokenGrant(fresh, tokens.refresh_token as string));
    expect(stopped.error).toBe('invalid_grant');
    const old = await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token as string));
    expect(old.error).toBe('invalid_client');
    // The access tokens of the ended grants are refused at once too.
    expect((await directions(tokens.access_token)).status).toBe(401);
    // New flows work with the new secret.
    const again = await tokensFor(fresh, 'https://courier.example.com/cb');
    expect((await directions(again.access_token)).status).toBe(200);
    confidentialApp.client_secret = newSecret;
  });
});

describe('registration', () => {
  it('checks redirect URIs: https, http://localhost:<port>/<path>, custom schemes with a full path', () => {
    expect(redirectUriProblem('https://app.example.org/cb')).toBeNull();
    expect(redirectUriProblem('http://localhost:3000/callback')).toBeNull();
    expect(redirectUriProblem('com.example.bikebuddy:/oauth/callback')).toBeNull();
    expect(redirectUriProblem('bikebuddy://oauth/callback')).toBeNull();
    expect(redirectUriProblem('http://app.example.org/cb')).toMatch(/localhost/);
    expect(redirectUriProblem('http://localhost/cb')).toMatch(/port/);
    expect(redirectUriProblem('http://localhost:3000/')).toMatch(/path/);
    expect(redirectUriProblem('bikebuddy:')).toMatch(/full path/);
    expect(redirectUriProblem('https://*.example.org/cb')).toMatch(/wildcard/);
    expect(redirectUriProblem('https://app.example.org/cb#x')).toMatch(/fragment/);
    expect(redirectUriProblem('javascript:alert(1)')).toMatch(/javascript/);
    expect(redirectUriProblem('/relative')).toMatch(/absolute/);
  });

  it('refuses bad registrations through the admin API with 400, and non-admins with 403', async () => {
    const post = (body: unknown, token = s.adminToken) =>
      fetch(`${s.base}/api/admin/oauth-clients/`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await post({ name: 'X', type: 'public', redirect_uris: ['http://evil.example/cb'] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/redirect_uris/);
    const mixed = await post({
      name: 'X',
      type: 'public',
      redirect_uris: ['bikebuddy://cb/x', 'http://localhost:3000/cb'],
    });
    expect(mixed.status).toBe(400);
    expect((await post({ name: 'X', type: 'secret', redirect_uris: [CALLBACK] })).status).toBe(400);
    expect((await post({ name: 'X', type: 'public', redirect_uris: [CALLBACK] }, s.riderToken)).status).toBe(
      403,
    );
    const list = await fetch(`${s.base}/api/admin/oauth-clients/`, { headers: bearer(s.adminToken) });
    const clients = ((await list.json()) as { clients: { client_id: string; name: string }[] }).clients;
    expect(clients.map((c) => c.name)).toContain('Bike Buddy');
    expect(JSON.stringify(clients)).not.toContain('secret_hash');
  });

  it('applies a change of redirect URIs to the next authorize request', async () => {
    const app = await registerApp(s, { name: 'Changing', type: 'public', redirect_uris: [CALLBACK] });
    const config = await discover(app.client_id);
    const moved = 'http://localhost:5999/moved';
    const patch = await fetch(`${s.base}/api/admin/oauth-clients/${app.client_id}/`, {
      method: 'PATCH',
      headers: { ...bearer(s.adminToken), 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [moved] }),
    });
    expect(patch.status).toBe(200);
    const c = await codeFor(config, moved);
    expect(c.callback.pathname).toBe('/moved');
    await expect(codeFor(config, CALLBACK)).rejects.toThrow(/400/);
  });

  it('registers, lists, rotates and revokes apps from the CLI; a revoked app stops at once', async () => {
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((m: string) => void out.push(String(m)));
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(
        oauthClientsCommand(s.config, [
          'create',
          '--name',
          'CLI app',
          '--type',
          'public',
          '--redirect-uri',
          'com.example.cli:/oauth/callback',
          '--redirect-uri',
          'https://cli.example.org/cb',
        ]),
      ).toBe(0);
      const clientId = (out.find((l) => l.startsWith('client_id: ')) ?? '').slice(11);
      expect(clientId).toMatch(/^qwc_/);
      expect(
        oauthClientsCommand(s.config, [
          'create',
          '--name',
          'Bad',
          '--type',
          'public',
          '--redirect-uri',
          'http://x.org/cb',
        ]),
      ).toBe(2);
      expect(oauthClientsCommand(s.config, ['list'])).toBe(0);
      expect(out.join('\n')).toContain('CLI app');
      expect(oauthClientsCommand(s.config, ['rotate-secret', clientId])).toBe(2); // public: no secret

      // A grant of the app, then the app revoked from another process (the CLI's own connection).
      const config = await discover(clientId);
      const c = await codeFor(config, 'https://cli.example.org/cb');
      const tokens = await oidc.authorizationCodeGrant(config, c.callback, {
        pkceCodeVerifier: c.verifier,
        expectedState: c.state,
      });
      expect(oauthClientsCommand(s.config, ['revoke', clientId])).toBe(0);
      const refused = await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token as string));
      expect(refused.error).toBe('invalid_client');
      expect((await directions(tokens.access_token)).status).toBe(401);
      const page = await fetch(
        oidc.buildAuthorizationUrl(config, {
          redirect_uri: 'https://cli.example.org/cb',
          scope: 'openid email',
          code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
        }),
        { redirect: 'manual' },
      );
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
    } finally {
      log.mockRestore();
      err.mockRestore();
    }
  });
});

describe('scope of a token on the platform', () => {
  let token: string;
  beforeAll(async () => {
    token = (await tokensFor(await discover(publicApp.client_id))).access_token;
  });

  it('works on the listed endpoints, reports belonging to the rider', async () => {
    expect((await directions(token)).status).toBe(200);
    const asked = await fetch(`${s.base}/explain-supersafe/`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ origin: TRIP.coordinates[0], destination: TRIP.coordinates[1] }),
    });
    expect(asked.status).toBe(200);
    expect(await asked.json()).toMatchObject({ identical: expect.any(Boolean) });
    // A report filed with the token is the rider's: visible to them (a rider sees only their own).
    const filed = await fetch(`${s.base}/reports/`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ issue_type: 'other', location: [-74.0105, 40.7075], description: 'via an app' }),
    });
    expect(filed.status).toBe(201);
    const { id } = (await filed.json()) as { id: number };
    expect((await fetch(`${s.base}/reports/${id}/`, { headers: bearer(token) })).status).toBe(200);
  });

  it('is refused with 401 where the spec documents it and 403 on the rest', async () => {
    const user = await fetch(`${s.base}/user/`, { headers: bearer(token) });
    expect(user.status).toBe(401);
    expect(await user.json()).toEqual({ error: 'OAuth access tokens are not accepted by this endpoint' });
    for (const [method, url] of [
      ['GET', '/api/users/search/?q=rider'],
      ['GET', '/api/admin/oauth-clients/'],
      ['POST', '/directions/'],
    ] as const) {
      const res = await fetch(`${s.base}${url}`, {
        method,
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify(TRIP) : undefined,
      });
      expect(res.status, url).toBe(403);
      expect(await res.json()).toEqual({ error: 'OAuth access tokens are not permitted on this endpoint' });
    }
  });

  it('answers an expired token with 401 everywhere', async () => {
    const claims = decodeJwt(token);
    const iat = claims.iat as number;
    const key = s.app.repos.signingKeys.active()[0];
    const jwk = JSON.parse(s.app.secretBox.open(key?.privateJwk as string));
    const expired = await new SignJWT({ ...claims, iat: iat - 7200, exp: iat - 3600 })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
      .sign(await importJWK(jwk, 'ES256'));
    for (const [method, url] of [
      ['POST', '/directions/v2/'],
      ['GET', '/user/'],
      ['GET', '/api/users/search/?q=rider'],
      ['POST', '/reports/'],
    ] as const) {
      const res = await fetch(`${s.base}${url}`, {
        method,
        headers: { ...bearer(expired), 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify(TRIP) : undefined,
      });
      expect(res.status, url).toBe(401);
      expect(await res.json()).toEqual({ error: 'Token expired' });
    }
  });
});

describe('attacks fail safely', () => {
  const authorizeUrl = (params: Record<string, string | undefined>) => {
    const u = new URL(`${s.issuer}/oauth/authorize`);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
    return u.href;
  };
  const base = () => ({
    response_type: 'code',
    client_id: publicApp.client_id,
    redirect_uri: CALLBACK,
    scope: 'openid email',
    state: 'st4te',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  async function errorPageFor(params: Record<string, string | undefined>) {
    const res = await fetch(authorizeUrl(params), { redirect: 'manual' });
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    return { status: res.status, html: await res.text() };
  }

  it('PKCE missing or plain: an error page, no redirect', async () => {
    const missing = await errorPageFor({
      ...base(),
      code_challenge: undefined,
      code_challenge_method: undefined,
    });
    expect(missing.status).toBe(400);
    expect(missing.html).toContain('code_challenge is required');
    const plain = await errorPageFor({ ...base(), code_challenge_method: 'plain' });
    expect(plain.status).toBe(400);
    expect(plain.html).toContain('S256');
    const noMethod = await errorPageFor({ ...base(), code_challenge_method: undefined });
    expect(noMethod.status).toBe(400);
  });

  it('a redirect URI differing by one character, or an unknown client: an error page, no redirect', async () => {
    for (const redirect_uri of [
      'http://localhost:5999/callbacK',
      'http://localhost:5998/callback',
      'http://localhost:5999/callback/',
      'http://localhost:5999/callbac',
    ]) {
      const p = await errorPageFor({ ...base(), redirect_uri });
      expect(p.status).toBe(400);
      expect(p.html).toContain('redirect_uri');
    }
    const unknown = await errorPageFor({ ...base(), client_id: 'qwc_unknown' });
    expect(unknown.status).toBe(400);
  });

  it('a code used twice: refused, and what it issued is revoked', async () => {
    const config = await discover(publicApp.client_id);
    const c = await codeFor(config);
    const code = c.callback.searchParams.get('code') as string;
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: c.verifier,
      client_id: publicApp.client_id,
    };
    const first = await tokenRequest(form);
    expect(first.status).toBe(200);
    const second = await tokenRequest(form);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
      client_id: publicApp.client_id,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    expect((await directions(first.body.access_token as string)).status).toBe(401);
  });

  it('a code older than 10 minutes: invalid_grant', async () => {
    const config = await discover(publicApp.client_id);
    const c = await codeFor(config);
    const code = c.callback.searchParams.get('code') as string;
    // The code as it stands 10 minutes later: past its expiry in the store.
    const db = openStore(s.config);
    // (Codes are stored under their SHA-256 digest.)
    db.prepare("UPDATE oauth_artefacts SET expires_at = 0 WHERE model = 'AuthorizationCode' AND id = ?").run(
      sha256(code),
    );
    db.close();
    const late = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: c.verifier,
      client_id: publicApp.client_id,
    });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe('invalid_grant');
  });

  it('a code redeemed by another client, or with a wrong verifier: invalid_grant', async () => {
    const other = await registerApp(s, { name: 'Other', type: 'public', redirect_uris: [CALLBACK] });
    const config = await discover(publicApp.client_id);
    const c = await codeFor(config);
    const code = c.callback.searchParams.get('code') as string;
    const stolen = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: c.verifier,
      client_id: other.client_id,
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');

    const c2 = await codeFor(config);
    const wrong = await tokenRequest({
      grant_type: 'authorization_code',
      code: c2.callback.searchParams.get('code') as string,
      redirect_uri: CALLBACK,
      code_verifier: oidc.randomPKCECodeVerifier(),
      client_id: publicApp.client_id,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    const noVerifier = await tokenRequest({
      grant_type: 'authorization_code',
      code: c2.callback.searchParams.get('code') as string,
      redirect_uri: CALLBACK,
      client_id: publicApp.client_id,
    });
    expect(noVerifier.status).toBe(400);
  });

  it('two requests racing with one refresh token: one wins, the other is a replay that ends the family', async () => {
    const config = await discover(publicApp.client_id);
    const tokens = await tokensFor(config);
    const form = {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: publicApp.client_id,
    };
    const answers = await Promise.all([tokenRequest(form), tokenRequest(form)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const won = answers.find((a) => a.status === 200)?.body as Record<string, string>;
    expect(answers.find((a) => a.status === 400)?.body.error).toBe('invalid_grant');
    const next = await tokenRequest({ ...form, refresh_token: won.refresh_token as string });
    expect(next.body.error).toBe('invalid_grant');
    expect((await directions(won.access_token as string)).status).toBe(401);
  });

  it('the store refuses a second use that slipped past oidc-provider’s check, ending the grant', async () => {
    const config = await discover(publicApp.client_id);
    const tokens = await tokensFor(config);
    // As if two requests had both read the refresh token unused: the second write loses.
    const adapter = (
      s.app.oauth.RefreshToken as unknown as { adapter: { consume(id: string): Promise<void> } }
    ).adapter;
    await adapter.consume(tokens.refresh_token as string);
    await expect(adapter.consume(tokens.refresh_token as string)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await directions(tokens.access_token)).status).toBe(401);
  });

  it('pages refuse framing and forged form posts', async () => {
    const b = new FormBrowser(s.base);
    const first = await b.request(authorizeUrl(base()));
    const pageUrl = first.headers.get('location') as string;
    const page = await b.request(pageUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).not.toMatch(/<(script|link|img)\b/);
    expect(html).toContain('<label for="email">');
    const signIn = `${pageUrl}/sign-in`;
    const noCsrf = await b.post(signIn, { email: RIDER.email, password: RIDER.password });
    expect(noCsrf.status).toBe(403);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const crossSite = await b.post(signIn, { csrf, ...RIDER }, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    const wrongPassword = await b.post(signIn, { csrf, email: RIDER.email, password: 'nope' });
    expect(wrongPassword.status).toBe(401);
    expect(await wrongPassword.text()).toContain('The email or password is not right.');
  });

  it('a login request older than 3 minutes: the page says it expired', async () => {
    const b = new FormBrowser(s.base);
    const first = await b.request(authorizeUrl(base()));
    const pageUrl = first.headers.get('location') as string;
    const uid = pageUrl.split('/').at(-1) as string;
    expect((await b.request(pageUrl)).status).toBe(200);
    expireLoginRequest(s, uid);
    const later = await b.request(pageUrl);
    expect(later.status).toBe(400);
    expect(await later.text()).toContain('This sign-in request has expired');
  });
});
