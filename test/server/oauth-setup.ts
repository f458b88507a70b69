// Shared set-up of the OAuth tests: a server listening on 127.0.0.1 whose public URL is its real
// address (the issuer must be what clients reach), a rider, an admin, and apps registered the way
// admins do it.
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { usersCommand } from '../../server/src/commands/admin.js';
import type { Config } from '../../server/src/config.js';
import { openStore } from '../../server/src/db/database.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

export const RIDER = { email: 'rider@example.org', password: 'pedal-power-2026', name: 'Rider' };
export const ADMIN = { email: 'admin@example.org', password: 'admin-password-2026', name: 'Admin' };

/** A free TCP port on 127.0.0.1 (the issuer URL needs it before the server starts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface OAuthServer {
  app: FastifyInstance;
  config: Config;
  base: string;
  issuer: string;
  adminToken: string;
  riderToken: string;
  close(): Promise<void>;
}

export async function startOAuthServer(
  o: {
    prepare?: (app: FastifyInstance) => void;
    withGraph?: boolean;
    env?: Record<string, string>;
    store?: 'suite' | 'sqlite';
  } = {},
): Promise<OAuthServer> {
  const port = await freePort();
  const config = testConfig(
    {
      QUIETWAY_HOST: '127.0.0.1',
      QUIETWAY_PORT: String(port),
      // The tests sign in and exchange tokens far more often than a rider would.
      QUIETWAY_RATE_LIMITS: JSON.stringify({ auth: { ip: [10_000, 60] } }),
      ...o.env,
    },
    o.store,
  );
  if (o.withGraph) {
    buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-lower-manhattan.osm.pbf')], config.graphDir, 25);
  }
  const app = await buildApp({ config });
  o.prepare?.(app);
  await app.listen({ host: '127.0.0.1', port });
  const base = `http://127.0.0.1:${port}`;
  const signUp = async (u: typeof RIDER) => {
    const res = await fetch(`${base}/auth/v1/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(u),
    });
    if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const riderToken = await signUp(RIDER);
  await signUp(ADMIN);
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  usersCommand(config, ['promote', ADMIN.email]);
  log.mockRestore();
  const res = await fetch(`${base}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
  });
  const adminToken = ((await res.json()) as { access_token: string }).access_token;
  return {
    app,
    config,
    base,
    issuer: `${base}/auth/v1`,
    adminToken,
    riderToken,
    close: () => app.close(),
  };
}

/** Registers an app through the admin API. */
export async function registerApp(
  s: OAuthServer,
  body: { name: string; type: 'public' | 'confidential'; redirect_uris: string[] },
): Promise<{ client_id: string; client_secret: string | null }> {
  const res = await fetch(`${s.base}/api/admin/oauth-clients/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { client_id: string; client_secret: string | null };
}

/** Moves a login request's expiry into the past (from another connection), as 3 minutes of waiting would. */
export function expireLoginRequest(s: OAuthServer, uid: string): void {
  const db = openStore(s.config);
  try {
    db.prepare("UPDATE oauth_artefacts SET expires_at = 0 WHERE model = 'Interaction' AND id = ?").run(uid);
  } finally {
    db.close();
  }
}
