// Registration of third-party apps (interface spec, Authentication part 4): the rules for redirect
// URIs, client IDs and secrets, and how a registered app is described to oidc-provider. Used by the
// admin CLI and the admin API alike.
import { randomBytes } from 'node:crypto';
import { sha256 } from '../auth/secrets.js';
import type { OAuthClientRecord, OAuthClientType, OAuthRepository } from '../db/oauth.js';

export const CLIENT_TYPES = ['public', 'confidential'] as const;
export const CLIENT_ID_PREFIX = 'qwc_';
const SECRET_PREFIX = 'qwcs_';
const MAX_REDIRECT_URIS = 20;

/** Schemes an app may not use for its callback: they run code or read files in the browser. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'vbscript:',
  'file:',
  'blob:',
  'about:',
  'ftp:',
  'ws:',
  'wss:',
]);

export class ClientRegistrationError extends Error {}

/**
 * Checks one redirect URI against the registration rules; returns what is wrong, or null. Web apps
 * register `https://` URIs and `http://localhost:<port>/<path>` for development; mobile apps a
 * custom scheme with a full path (or a claimed `https://` link). URIs are kept exactly as given and
 * matched exactly (no wildcards, patterns or prefixes).
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  if (/\s/.test(uri)) return 'contains white space';
  if (uri.includes('*')) return 'contains a wildcard (redirect URIs are matched exactly)';
  const url = URL.parse(uri);
  if (!url) return 'is not an absolute URI';
  if (uri.includes('#')) return 'has a fragment';
  if (url.username || url.password) return 'carries credentials';
  if (url.protocol === 'https:') {
    if (!url.hostname) return 'has no host';
    return null;
  }
  if (url.protocol === 'http:') {
    if (url.hostname !== 'localhost') {
      return 'uses http:// on a host other than localhost (use https://, or http://localhost:<port>/<path> for development)';
    }
    if (!url.port) return 'is a localhost URI without a port';
    if (url.pathname.length <= 1) return 'is a localhost URI without a path';
    return null;
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `uses the ${url.protocol.slice(0, -1)} scheme`;
  // A custom scheme (mobile app): a full path, e.g. com.example.app:/oauth/callback.
  const path = url.host ? url.pathname : url.pathname.replace(/^\/*/, '/');
  if (path.length <= 1) return 'is a custom-scheme URI without a full path';
  return null;
}

const isCustomScheme = (uri: string) => !/^https?:/i.test(uri);

/** Checks a whole set of redirect URIs; throws ClientRegistrationError naming each problem. */
export function checkRedirectUris(uris: string[]): string[] {
  if (uris.length === 0) throw new ClientRegistrationError('redirect_uris: at least one is required');
  if (uris.length > MAX_REDIRECT_URIS) {
    throw new ClientRegistrationError(`redirect_uris: at most ${MAX_REDIRECT_URIS}`);
  }
  const problems = uris.flatMap((u) => {
    const p = redirectUriProblem(u);
    return p ? [`redirect_uris: ${u} ${p}`] : [];
  });
  // oidc-provider treats apps with custom schemes as native apps, for which it matches loopback
  // callbacks on any port; keeping localhost callbacks to web apps keeps every match exact.
  if (uris.some(isCustomScheme) && uris.some((u) => u.startsWith('http:'))) {
    problems.push(
      'redirect_uris: a mobile app (custom scheme) cannot also register http://localhost URIs; register a separate development client',
    );
  }
  if (problems.length > 0) throw new ClientRegistrationError(problems.join('; '));
  return [...new Set(uris)];
}

function newSecret(): { secret: string; hash: string } {
  const secret = SECRET_PREFIX + randomBytes(32).toString('base64url');
  return { secret, hash: sha256(secret) };
}

export interface RegisteredClient {
  client: OAuthClientRecord;
  /** Confidential apps only, shown once. */
  secret: string | null;
}

export function registerClient(
  repo: OAuthRepository,
  c: { name: string; redirectUris: string[]; type: OAuthClientType },
): RegisteredClient {
  const name = c.name.trim();
  if (!name || name.length > 200) throw new ClientRegistrationError('name: 1 to 200 characters');
  const redirectUris = checkRedirectUris(c.redirectUris);
  const clientId = CLIENT_ID_PREFIX + randomBytes(16).toString('base64url');
  const s = c.type === 'confidential' ? newSecret() : null;
  const client = repo.createClient({
    clientId,
    name,
    redirectUris,
    type: c.type,
    secretHash: s?.hash ?? null,
  });
  return { client, secret: s?.secret ?? null };
}

export function updateClient(
  repo: OAuthRepository,
  clientId: string,
  change: { name?: string; redirectUris?: string[] },
): OAuthClientRecord | undefined {
  const name = change.name?.trim();
  if (name !== undefined && (!name || name.length > 200)) {
    throw new ClientRegistrationError('name: 1 to 200 characters');
  }
  const redirectUris = change.redirectUris ? checkRedirectUris(change.redirectUris) : undefined;
  return repo.updateClient(clientId, { name, redirectUris });
}

/** Issues a new secret for a confidential app (shown once); the app's refresh tokens stop at once. */
export function rotateClientSecret(
  repo: OAuthRepository,
  clientId: string,
): { client: OAuthClientRecord; secret: string } | undefined {
  const existing = repo.client(clientId);
  if (!existing) return undefined;
  if (existing.revokedAt) throw new ClientRegistrationError('the app is revoked');
  if (existing.type !== 'confidential') {
    throw new ClientRegistrationError('public apps have no secret');
  }
  const s = newSecret();
  const client = repo.rotateSecret(clientId, s.hash) as OAuthClientRecord;
  return { client, secret: s.secret };
}

/** The app as oidc-provider's client metadata (revoked apps are unknown to it). */
export function clientMetadata(c: OAuthClientRecord): Record<string, unknown> | undefined {
  if (c.revokedAt) return undefined;
  const native = c.redirectUris.some(isCustomScheme);
  return {
    client_id: c.clientId,
    client_name: c.name,
    redirect_uris: c.redirectUris,
    application_type: native ? 'native' : 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: 'openid email',
    id_token_signed_response_alg: 'ES256',
    ...(c.type === 'confidential'
      ? // The digest stands where oidc-provider expects the secret; see compareClientSecret in provider.ts.
        { token_endpoint_auth_method: 'client_secret_basic', client_secret: c.secretHash }
      : { token_endpoint_auth_method: 'none' }),
  };
}
