// The OAuth 2.1 authorization server (interface spec, Authentication part 4; decisions.md "OAuth
// 2.1"): oidc-provider configured for the authorization-code flow with PKCE S256 only, exact
// redirect matching, single-use codes, rotating refresh tokens with replay detection, ES256 JWT
// access tokens for this API and ID tokens signed with the server's own keys, over a storage adapter
// on the project's SQLite database.
import { timingSafeEqual } from 'node:crypto';
import Provider, {
  type Adapter,
  type AdapterPayload,
  type Configuration,
  errors,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { SecretBox } from '../auth/sealing.js';
import { sha256 } from '../auth/secrets.js';
import { ACCESS_TOKEN_SECONDS } from '../auth/tokens.js';
import type { OAuthRepository } from '../db/oauth.js';
import type { Repositories } from '../db/repositories.js';
import { isStorageFull } from '../errors.js';
import { clientMetadata } from './clients.js';

/** Where oidc-provider is mounted: its issuer is `{base_url}/auth/v1`, like the session tokens'. */
export const OAUTH_MOUNT = '/auth/v1';
/** The rider's sign-in and consent pages (`{consent_url}`), one per login request. */
export const CONSENT_PATH = '/oauth/consent';
export const SCOPES = ['openid', 'email'] as const;
/** The audience of access tokens: the one the server's token verifier expects. */
const AUDIENCE = 'quietway';
export const LOGIN_REQUEST_SECONDS = 180;
export const CODE_SECONDS = 600;
/** The rider's sign-in at the authorization server (a browser cookie), so later apps skip the password. */
const BROWSER_SESSION_SECONDS = 86_400;

/**
 * Artefacts whose id is the bearer value an app presents (opaque codes and refresh tokens): stored
 * under its SHA-256 digest and without `jti`, like the server's own refresh tokens, so a copy of
 * the database holds none that work (issue 26, finding 7).
 */
const HASHED_MODELS: ReadonlySet<string> = new Set(['AuthorizationCode', 'RefreshToken']);

/** The artefacts that belong to a grant (ended with it). */
const GRANT_MEMBERS = ['AccessToken', 'AuthorizationCode', 'RefreshToken'];

/**
 * A write refused for lack of space (issue 26): OAuth's `temporarily_unavailable` with 503 rather than
 * oidc-provider's 500 `server_error`. It keeps the storage error's `code`, so the server's own error
 * handler answers 503 `Storage full` where it reaches a page of ours instead.
 */
function storageFullError(err: unknown, onFull: () => void): unknown {
  if (!isStorageFull(err)) return err;
  onFull();
  return Object.assign(new errors.OIDCProviderError(503, 'temporarily_unavailable'), {
    expose: true,
    error_description: 'The server cannot save data right now (storage full); try again later.',
    code: (err as { code: string }).code,
  });
}

/** oidc-provider's storage adapter over the SQLite repository; `consumed` is kept and returned. */
function sqliteAdapter(repo: OAuthRepository, onStorageFull: () => void) {
  /** Runs a write, turning a full store into `temporarily_unavailable`. */
  const write = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw storageFullError(err, onStorageFull);
    }
  };
  const withConsumed = (a: ReturnType<OAuthRepository['find']>): AdapterPayload | undefined =>
    a && (a.consumedAt === null ? a.payload : { ...a.payload, consumed: a.consumedAt });
  return class SqliteAdapter implements Adapter {
    private readonly hashed: boolean;
    constructor(private readonly model: string) {
      this.hashed = HASHED_MODELS.has(model);
    }
    /** The row key: a bearer value's SHA-256 digest (see HASHED_MODELS), else the id itself. */
    private key(id: string): string {
      return this.hashed ? sha256(id) : id;
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      // The value itself (`jti`) is not stored for hashed models; find() puts it back.
      const { jti: _jti, ...rest } = payload;
      const stored = this.hashed ? rest : payload;
      write(() => repo.upsert(this.model, this.key(id), stored as Record<string, unknown>, expiresIn));
    }
    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') {
        const c = repo.client(id);
        return c && (clientMetadata(c) as AdapterPayload | undefined);
      }
      const found = withConsumed(repo.find(this.model, this.key(id)));
      return found && this.hashed ? { ...found, jti: id } : found;
    }
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return withConsumed(repo.findByUid(this.model, uid));
    }
    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return withConsumed(repo.findByUserCode(this.model, userCode));
    }
    async consume(id: string): Promise<void> {
      const key = this.key(id);
      if (write(() => repo.consume(this.model, key))) return;
      // Another request used this code or refresh token between oidc-provider's read and this
      // write: the loser is a replay, so the grant ends as it would for one presented later.
      const grantId = repo.grantOf(this.model, key);
      if (grantId) {
        write(() => {
          for (const model of GRANT_MEMBERS) repo.revokeByGrantId(model, grantId);
          repo.destroy('Grant', grantId);
        });
      }
      throw new errors.InvalidGrant('grant request is invalid');
    }
    async destroy(id: string): Promise<void> {
      write(() => repo.destroy(this.model, this.key(id)));
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      write(() => repo.revokeByGrantId(this.model, grantId));
    }
  };
}

export interface ProviderOptions {
  repos: Repositories;
  /** Opens the signing keys, which are sealed at rest (auth/sealing.ts). */
  box: SecretBox;
  /** `{base_url}/auth/v1`. */
  issuer: string;
  refreshTokenDays: number;
  trustProxy: boolean;
  /** Called when a write is refused for lack of space (for /health/). */
  onStorageFull?: () => void;
  /** Renders the error page for authorize-time problems (never a redirect). */
  renderError: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) => void;
}

export function createProvider(o: ProviderOptions): Provider {
  const { repos } = o;
  // The same ES256 keys that sign session tokens and are published at /auth/v1/.well-known/jwks.json.
  const keys = repos.signingKeys
    .active()
    .map((k) => JSON.parse(o.box.open(k.privateJwk)) as Record<string, unknown>);
  const resource = new URL('/', o.issuer).href;
  const refreshSeconds = o.refreshTokenDays * 86_400;

  const configuration: Configuration = {
    adapter: sqliteAdapter(repos.oauth, o.onStorageFull ?? (() => {})),
    jwks: { keys: keys as never },
    clients: [],
    async findAccount(_ctx, sub) {
      const user = repos.users.byIdentity(sub);
      if (!user) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: user.email }) };
    },
    claims: { openid: ['sub'], email: ['email'] },
    scopes: [...SCOPES],
    // The ID token carries the email even though an access token is issued beside it.
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_basic'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: 'ES256',
      token_endpoint_auth_method: 'none',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256'],
      clientAuthSigningAlgValues: ['ES256'],
      requestObjectSigningAlgValues: ['ES256'],
      userinfoSigningAlgValues: ['ES256'],
      introspectionSigningAlgValues: ['ES256'],
      authorizationSigningAlgValues: ['ES256'],
    },
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    // Every authorize request asks the rider again and makes its own grant (a token family of its own).
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    // The grant id is the access token's `sid`: the server refuses tokens of a revoked grant.
    extraTokenClaims: async (_ctx, token) =>
      'grantId' in token && token.grantId ? { sid: token.grantId } : undefined,
    ttl: {
      AccessToken: ACCESS_TOKEN_SECONDS,
      AuthorizationCode: CODE_SECONDS,
      IdToken: ACCESS_TOKEN_SECONDS,
      Interaction: LOGIN_REQUEST_SECONDS,
      RefreshToken: refreshSeconds,
      Grant: refreshSeconds,
      Session: BROWSER_SESSION_SECONDS,
    },
    cookies: {
      keys: [repos.oauth.serverSecret('oauth-cookies')],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      revocation: '/oauth/revoke',
      // Served by the server's own route (the same keys).
      jwks: '/.well-known/jwks.json',
    },
    interactions: { url: async (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Access tokens are always for this API, whether or not the app names it.
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: SCOPES.join(' '),
            audience: AUDIENCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: ACCESS_TOKEN_SECONDS,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    async renderError(ctx, out) {
      o.renderError(ctx, out as { error: string; error_description?: string });
    },
  };

  const provider = new Provider(o.issuer, configuration);
  provider.proxy = o.trustProxy;
  // Confidential apps' secrets are stored as SHA-256 digests (shown once, like API keys), so the
  // presented secret is hashed before the constant-time comparison.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: { clientSecret?: string },
    actual: string,
  ): boolean {
    const stored = Buffer.from(this.clientSecret ?? '', 'utf8');
    const given = Buffer.from(sha256(String(actual)), 'utf8');
    return stored.length === given.length && timingSafeEqual(stored, given);
  };
  return provider;
}
