// The server as identity provider: ES256 access tokens signed with keys kept in the database
// (generated on first start, sealed at rest by a SecretBox, published as JWKS), and verification of
// those tokens and, when configured, of an external identity provider's tokens.
import { randomUUID } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import type { Repositories, User } from '../db/repositories.js';
import { SecretBox } from './sealing.js';

export const ACCESS_TOKEN_SECONDS = 3600;
type SigningKey = Awaited<ReturnType<typeof importJWK>>;
const AUDIENCE = 'quietway';

export interface ExternalIdp {
  issuer: string;
  jwksUrl: string;
  /** The `aud` the provider puts in tokens meant for Quietway; tokens for other apps are refused. */
  audience: string;
}

/** What a verified bearer token says. */
export interface VerifiedToken {
  /** `session`: signed in here; `oauth`: issued to a third-party app; `external`: another IdP. */
  kind: 'session' | 'oauth' | 'external';
  /** Who issued it: our own issuer, or the outside provider's (accounts are bound to the pair). */
  issuer: string;
  subject: string;
  sessionId: string | null;
  clientId: string | null;
  email: string | null;
}

export class TokenError extends Error {
  constructor(readonly reason: 'expired' | 'invalid') {
    super(reason === 'expired' ? 'Token expired' : 'Invalid token');
  }
}

export class TokenService {
  private constructor(
    private readonly issuer: string,
    private readonly kid: string,
    private readonly privateKey: SigningKey,
    private readonly publicJwks: JSONWebKeySet,
    private readonly localJwks: ReturnType<typeof createLocalJWKSet>,
    private readonly external: {
      issuer: string;
      audience: string;
      jwks: ReturnType<typeof createRemoteJWKSet>;
    } | null,
  ) {}

  /**
   * Loads the newest signing key, generating and storing one if the database has none (another
   * process starting on the same fresh database may store its own first: then every process uses
   * that one, and a token one signs is one the others accept). Private keys
   * stored in plain text (before sealing existed) or under a previous secret key are sealed under
   * the current one first.
   */
  static async create(
    repos: Repositories,
    issuer: string,
    box: SecretBox,
    external?: ExternalIdp,
  ): Promise<TokenService> {
    repos.transaction(() => {
      for (const k of repos.signingKeys.all()) {
        if (box.isCurrent(k.privateJwk)) continue;
        const plain = SecretBox.isSealed(k.privateJwk) ? box.open(k.privateJwk) : k.privateJwk;
        repos.signingKeys.setPrivate(k.kid, box.seal(plain));
      }
    });
    let keys = repos.signingKeys.active();
    if (keys.length === 0) {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const kid = randomUUID();
      const pub = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
      const priv = { ...(await exportJWK(privateKey)), kid, alg: 'ES256' };
      repos.signingKeys.addIfNone({
        kid,
        privateJwk: box.seal(JSON.stringify(priv)),
        publicJwk: JSON.stringify(pub),
      });
      keys = repos.signingKeys.active();
    }
    const newest = keys[0];
    if (!newest) throw new Error('no signing key');
    const privateKey = (await importJWK(
      JSON.parse(box.open(newest.privateJwk)) as JWK,
      'ES256',
    )) as SigningKey;
    const publicJwks = { keys: keys.map((k) => JSON.parse(k.publicJwk) as JWK) };
    return new TokenService(
      issuer,
      newest.kid,
      privateKey,
      publicJwks,
      createLocalJWKSet(publicJwks),
      external
        ? {
            issuer: external.issuer,
            audience: external.audience,
            jwks: createRemoteJWKSet(new URL(external.jwksUrl), { timeoutDuration: 4000 }),
          }
        : null,
    );
  }

  /** The public keys, for `/.well-known/jwks.json`. */
  jwks(): JSONWebKeySet {
    return this.publicJwks;
  }

  getIssuer(): string {
    return this.issuer;
  }

  /** An access token for a user's session (or, with `clientId`, for a third-party app). */
  async issueAccessToken(
    user: User,
    sessionId: string,
    clientId: string | null = null,
    seconds = ACCESS_TOKEN_SECONDS,
  ): Promise<string> {
    const claims: JWTPayload = {
      role: user.role === 'admin' ? 'admin' : 'authenticated',
      email: user.email,
      sid: sessionId,
      ...(clientId ? { client_id: clientId, scope: 'openid email' } : {}),
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setSubject(user.identityUserId)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(Math.floor(Date.now() / 1000) + seconds)
      .sign(this.privateKey);
  }

  /** Verifies a bearer JWT; throws TokenError('expired' | 'invalid'). */
  async verify(token: string): Promise<VerifiedToken> {
    let issuer: string | undefined;
    try {
      const [, payload] = token.split('.');
      issuer = (JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as JWTPayload).iss;
    } catch {
      throw new TokenError('invalid');
    }
    try {
      if (issuer === this.issuer) {
        const { payload } = await jwtVerify(token, this.localJwks, {
          issuer: this.issuer,
          audience: AUDIENCE,
          algorithms: ['ES256'],
          requiredClaims: ['sub', 'exp', 'sid'],
        });
        const clientId = typeof payload.client_id === 'string' ? payload.client_id : null;
        return {
          kind: clientId ? 'oauth' : 'session',
          issuer: this.issuer,
          subject: payload.sub as string,
          sessionId: payload.sid as string,
          clientId,
          email: typeof payload.email === 'string' ? payload.email : null,
        };
      }
      if (this.external && issuer === this.external.issuer) {
        const { payload } = await jwtVerify(token, this.external.jwks, {
          issuer: this.external.issuer,
          // A token the provider issued to another app is not a credential here.
          audience: this.external.audience,
          algorithms: ['ES256', 'RS256', 'EdDSA'],
          requiredClaims: ['sub', 'exp'],
        });
        return {
          kind: 'external',
          issuer: this.external.issuer,
          subject: payload.sub as string,
          sessionId: null,
          clientId: null,
          email: typeof payload.email === 'string' ? payload.email : null,
        };
      }
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new TokenError('expired');
      throw new TokenError('invalid');
    }
    throw new TokenError('invalid');
  }
}
