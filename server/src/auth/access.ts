// Who may call what (interface spec "Authentication", decisions.md "Credentials"). Each route states
// its rule in `config.access`; routes without one require some credential, so nothing is public by
// accident. Credentials are resolved once per request from `apikey` or `Authorization: Bearer`.
import type { FastifyRequest } from 'fastify';
import type { ApiKeyRecord, KeyKind, Repositories, User } from '../db/repositories.js';
import { HttpError } from '../errors.js';
import { API_KEY_PREFIX, sha256 } from './secrets.js';
import { TokenError, type TokenService } from './tokens.js';

export type Credential =
  | { type: 'anonymous' }
  | { type: 'key'; key: ApiKeyRecord }
  /** A signed-in rider (here or at the configured external identity provider). */
  | { type: 'user'; user: User; sessionId: string | null; key: ApiKeyRecord | null }
  /** A third-party app acting for a rider (OAuth 2.1). */
  | { type: 'oauth'; user: User; clientId: string; sessionId: string };

export type Caller = KeyKind | 'user';

export interface Access {
  /** Public: no credential needed (one that is sent must still be valid). */
  public?: boolean;
  /** Credentials accepted: API key kinds and `user` (a user session). */
  allow?: Caller[];
  /** Only users with the admin role. */
  admin?: boolean;
  /**
   * OAuth access tokens: `accept` where the spec lists the endpoint, `reject` (401) where the spec
   * documents the refusal (profile, rides, settings), `forbid` (403) on the rest of the platform.
   */
  oauth?: 'accept' | 'reject' | 'forbid';
  /** Deprecated v1 routes: API keys must carry the `legacy_v1` flag. */
  legacyV1?: boolean;
}

export const NO_CREDENTIALS = 'Authentication credentials were not provided.';
export const OAUTH_REJECTED = 'OAuth access tokens are not accepted by this endpoint';
export const OAUTH_FORBIDDEN = 'OAuth access tokens are not permitted on this endpoint';
export const V1_CLOSED = 'This API version is closed to new integrations';
export const ADMIN_REQUIRED = 'Admin role required';

/** How callers are named in `Endpoint requires one of: …` (publishable keys are service keys for browsers). */
const LABEL: Record<Caller, string> = {
  user: 'user',
  app: 'app',
  partner: 'partner',
  publishable: 'service',
  service: 'service',
};

export function requiresMessage(allow: Caller[]): string {
  const order: Caller[] = ['user', 'app', 'partner', 'publishable', 'service'];
  const labels = [...new Set(order.filter((c) => allow.includes(c)).map((c) => LABEL[c]))];
  return `Endpoint requires one of: ${labels.join(', ')}`;
}

const unauthorized = (message: string) => new HttpError(401, message);

/** Last-used stamps are written at most once a minute per key. */
const TOUCH_INTERVAL_MS = 60_000;

export class CredentialResolver {
  private readonly touched = new Map<number, number>();

  constructor(
    private readonly repos: Repositories,
    private readonly tokens: TokenService,
  ) {}

  private key(raw: string): ApiKeyRecord {
    const key = this.repos.apiKeys.byHash(sha256(raw));
    if (!key || key.revokedAt) throw unauthorized('Invalid API key');
    const now = Date.now();
    if ((this.touched.get(key.id) ?? 0) + TOUCH_INTERVAL_MS < now) {
      this.touched.set(key.id, now);
      try {
        this.repos.apiKeys.touch(key.id, new Date(now).toISOString());
      } catch {
        // A bookkeeping stamp: a full disk (or a busy database) must not turn a read into an error.
      }
    }
    return key;
  }

  private async token(
    raw: string,
  ): Promise<{ user: User; verified: Awaited<ReturnType<TokenService['verify']>> }> {
    let verified: Awaited<ReturnType<TokenService['verify']>>;
    try {
      verified = await this.tokens.verify(raw);
    } catch (err) {
      throw unauthorized(err instanceof TokenError ? err.message : 'Invalid token');
    }
    if (verified.sessionId && this.repos.sessions.isRevoked(verified.sessionId)) {
      throw unauthorized('Session has been signed out');
    }
    let user: User | undefined;
    if (verified.kind === 'external') {
      // An outside token names an account only through its (issuer, subject) binding, never through
      // a local identity_user_id; the first visit makes a fresh account with the role `user`.
      user =
        this.repos.users.byExternalIdentity(verified.issuer, verified.subject) ??
        this.repos.users.createExternal({
          issuer: verified.issuer,
          subject: verified.subject,
          email: verified.email,
        });
    } else {
      // Our own tokens: signed here, for sessions started here.
      user = this.repos.users.byIdentity(verified.subject);
    }
    if (!user) throw unauthorized('Invalid token');
    return { user, verified };
  }

  /** The request's credential; throws 401 when one is sent but is not valid. */
  async resolve(request: FastifyRequest): Promise<Credential> {
    const header = request.headers.authorization;
    const apikey = request.headers.apikey;
    let bearer: string | undefined;
    if (typeof header === 'string' && header.length > 0) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthorized('Authorization header must be "Bearer <credential>"');
      bearer = m[1];
    }
    const keyHeader = typeof apikey === 'string' && apikey.length > 0 ? apikey : undefined;
    // A user token may come with the app's key beside it (`apikey` + `Authorization`): the user is
    // the caller then.
    if (bearer && !bearer.startsWith(API_KEY_PREFIX)) {
      const key = keyHeader ? this.key(keyHeader) : null;
      const { user, verified } = await this.token(bearer);
      if (verified.kind === 'oauth') {
        return {
          type: 'oauth',
          user,
          clientId: verified.clientId as string,
          sessionId: verified.sessionId as string,
        };
      }
      return { type: 'user', user, sessionId: verified.sessionId, key };
    }
    const raw = bearer ?? keyHeader;
    if (raw === undefined) return { type: 'anonymous' };
    if (bearer && keyHeader && bearer !== keyHeader) {
      throw unauthorized('Send one API key, not two different ones');
    }
    return { type: 'key', key: this.key(raw) };
  }
}

/** Enforces a route's access rule on a resolved credential; throws the spec's 401/403. */
export function authorize(access: Access | undefined, cred: Credential): void {
  if (access?.public) return;
  const allow = access?.allow ?? ['user', 'app', 'partner', 'publishable', 'service'];
  switch (cred.type) {
    case 'anonymous':
      throw unauthorized(NO_CREDENTIALS);
    case 'oauth': {
      const rule = access?.oauth ?? 'forbid';
      if (rule === 'reject') throw unauthorized(OAUTH_REJECTED);
      if (rule === 'forbid') throw new HttpError(403, OAUTH_FORBIDDEN);
      return;
    }
    case 'user':
      if (!allow.includes('user')) throw unauthorized(requiresMessage(allow));
      if (access?.admin && cred.user.role !== 'admin') throw new HttpError(403, ADMIN_REQUIRED);
      return;
    case 'key':
      if (!allow.includes(cred.key.kind) || access?.admin) {
        throw unauthorized(requiresMessage(access?.admin ? ['user'] : allow));
      }
      if (access?.legacyV1 && !cred.key.legacyV1) throw new HttpError(403, V1_CLOSED);
      return;
  }
}
