// Sign-up, sign-in, refresh-token rotation with replay detection, and sign-out.
import type { Repositories, User } from '../db/repositories.js';
import { ConflictError } from '../db/repositories.js';
import { HttpError } from '../errors.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { newRefreshToken, sha256 } from './secrets.js';
import { ACCESS_TOKEN_SECONDS, type TokenService } from './tokens.js';

export interface SessionTokens {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: PublicUser;
}

export interface PublicUser {
  identity_user_id: string;
  email: string;
  name: string;
  role: 'user' | 'admin';
}

export const publicUser = (u: User): PublicUser => ({
  identity_user_id: u.identityUserId,
  email: u.email,
  name: u.name,
  role: u.role,
});

export const REPLAYED_REFRESH_TOKEN = 'Refresh token already used; the session has been revoked';

export class SessionService {
  constructor(
    private readonly repos: Repositories,
    private readonly tokens: TokenService,
    private readonly refreshTokenDays: number,
  ) {}

  private async issue(user: User, sessionId: string, clientId: string | null): Promise<SessionTokens> {
    const refresh = newRefreshToken();
    const expiresAt = new Date(Date.now() + this.refreshTokenDays * 86_400_000).toISOString();
    this.repos.sessions.addRefreshToken(sessionId, refresh.hash, expiresAt);
    return {
      access_token: await this.tokens.issueAccessToken(user, sessionId, clientId),
      token_type: 'bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
      expires_at: Math.floor(Date.now() / 1000) + ACCESS_TOKEN_SECONDS,
      refresh_token: refresh.token,
      user: publicUser(user),
    };
  }

  /** Starts a session for a user (sign-in here, or an OAuth grant with `clientId`). */
  async start(user: User, clientId: string | null = null): Promise<SessionTokens> {
    const sessionId = this.repos.sessions.create(user.id, clientId);
    return this.issue(user, sessionId, clientId);
  }

  async signUp(email: string, password: string, name: string): Promise<SessionTokens> {
    const passwordHash = await hashPassword(password);
    let user: User;
    try {
      user = this.repos.users.create({ email, name, passwordHash });
    } catch (err) {
      if (err instanceof ConflictError) throw new HttpError(409, 'Email already registered');
      throw err;
    }
    return this.start(user);
  }

  async signIn(email: string, password: string): Promise<SessionTokens> {
    const user = this.repos.users.byEmail(email);
    const ok = await verifyPassword(password, user ? this.repos.users.passwordHash(user.id) : null);
    if (!user || !ok) throw new HttpError(400, 'Invalid email or password');
    return this.start(user);
  }

  /**
   * Exchanges a refresh token for new tokens. Each refresh token works once: presenting one that
   * was already exchanged means it was copied, so the whole session (every token of its family)
   * is revoked.
   */
  async refresh(refreshToken: string, clientId: string | null = null): Promise<SessionTokens> {
    const rec = this.repos.sessions.findRefreshToken(sha256(refreshToken));
    if (!rec || rec.clientId !== clientId) throw new HttpError(400, 'Invalid refresh token');
    if (rec.sessionRevokedAt) throw new HttpError(400, 'Session has been revoked');
    if (rec.rotatedAt || !this.repos.sessions.markRotated(rec.id)) {
      this.repos.sessions.revoke(rec.sessionId, 'refresh token replayed');
      throw new HttpError(400, REPLAYED_REFRESH_TOKEN);
    }
    if (Date.parse(rec.expiresAt) <= Date.now()) throw new HttpError(400, 'Refresh token expired');
    const user = this.repos.users.byId(rec.userId);
    if (!user) throw new HttpError(400, 'Invalid refresh token');
    return this.issue(user, rec.sessionId, clientId);
  }

  signOut(sessionId: string): void {
    this.repos.sessions.revoke(sessionId, 'signed out');
  }
}
