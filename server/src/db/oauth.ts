// Storage of the OAuth 2.1 authorization server: the third-party apps admins register, and the
// artefacts oidc-provider keeps (browser sessions, login requests, codes, refresh tokens, grants).
// A grant is also a row of `sessions` (id = grant id, with the app's client id), so the access
// tokens that name it in their `sid` claim stop the moment it is revoked, like a rider's own session.
import { randomBytes } from 'node:crypto';
import type { Db } from './sql.js';

export type OAuthClientType = 'public' | 'confidential';

export interface OAuthClientRecord {
  clientId: string;
  name: string;
  redirectUris: string[];
  type: OAuthClientType;
  /** SHA-256 digest of the secret (confidential apps). */
  secretHash: string | null;
  createdAt: string;
  updatedAt: string;
  secretRotatedAt: string | null;
  revokedAt: string | null;
}

/** One stored artefact as oidc-provider gave it. */
export interface OAuthArtefact {
  payload: Record<string, unknown>;
  /** When a single-use artefact was used (epoch seconds), or null. */
  consumedAt: number | null;
}

export interface OAuthRepository {
  createClient(c: {
    clientId: string;
    name: string;
    redirectUris: string[];
    type: OAuthClientType;
    secretHash: string | null;
  }): OAuthClientRecord;
  client(clientId: string): OAuthClientRecord | undefined;
  listClients(): OAuthClientRecord[];
  /** Changes the name or redirect URIs; undefined when there is no such app. */
  updateClient(
    clientId: string,
    change: { name?: string; redirectUris?: string[] },
  ): OAuthClientRecord | undefined;
  /** Stores a new secret digest and ends every grant of the app. */
  rotateSecret(clientId: string, secretHash: string): OAuthClientRecord | undefined;
  /** Revokes the app and ends every grant of it; false when unknown or already revoked. */
  revokeClient(clientId: string): boolean;

  upsert(model: string, id: string, payload: Record<string, unknown>, expiresInSeconds?: number): void;
  find(model: string, id: string): OAuthArtefact | undefined;
  findByUid(model: string, uid: string): OAuthArtefact | undefined;
  findByUserCode(model: string, userCode: string): OAuthArtefact | undefined;
  /**
   * Marks a single-use artefact used. False when it already was: two requests raced with the same
   * code or refresh token, and the one that lost is a replay.
   */
  consume(model: string, id: string): boolean;
  /** The grant an artefact belongs to. */
  grantOf(model: string, id: string): string | null;
  destroy(model: string, id: string): void;
  revokeByGrantId(model: string, grantId: string): void;

  /** A named random secret (base64url of 32 bytes), made on first use and kept. */
  serverSecret(name: string): string;
}

interface ClientRow {
  client_id: string;
  name: string;
  redirect_uris: string;
  type: OAuthClientType;
  secret_hash: string | null;
  created_at: string;
  updated_at: string;
  secret_rotated_at: string | null;
  revoked_at: string | null;
}

const toClient = (r: ClientRow): OAuthClientRecord => ({
  clientId: r.client_id,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  type: r.type,
  secretHash: r.secret_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  secretRotatedAt: r.secret_rotated_at,
  revokedAt: r.revoked_at,
});

interface ArtefactRow {
  payload: string;
  consumed_at: number | null;
}

const CLIENT_COLUMNS =
  'client_id, name, redirect_uris, type, secret_hash, created_at, updated_at, secret_rotated_at, revoked_at';
const ALIVE = '(expires_at IS NULL OR expires_at > ?)';
/** Expired artefacts are swept at most this often. */
const SWEEP_INTERVAL_MS = 60_000;

export function sqlOAuth(db: Db): OAuthRepository {
  const now = () => new Date().toISOString();
  const epoch = () => Math.floor(Date.now() / 1000);
  const s = {
    clientInsert: db.prepare(
      'INSERT INTO oauth_clients (client_id, name, redirect_uris, type, secret_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    client: db.prepare(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = ?`),
    clients: db.prepare(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients ORDER BY created_at, client_id`),
    clientUpdate: db.prepare(
      'UPDATE oauth_clients SET name = ?, redirect_uris = ?, updated_at = ? WHERE client_id = ?',
    ),
    clientSecret: db.prepare(
      'UPDATE oauth_clients SET secret_hash = ?, secret_rotated_at = ?, updated_at = ? WHERE client_id = ?',
    ),
    clientRevoke: db.prepare(
      'UPDATE oauth_clients SET revoked_at = ?, updated_at = ? WHERE client_id = ? AND revoked_at IS NULL',
    ),
    // Ends an app's grants: their refresh tokens and codes go, their sessions are marked revoked.
    clientArtefactsDelete: db.prepare(
      "DELETE FROM oauth_artefacts WHERE client_id = ? AND model IN ('Grant', 'RefreshToken', 'AuthorizationCode', 'AccessToken')",
    ),
    clientSessionsRevoke: db.prepare(
      'UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE client_id = ? AND revoked_at IS NULL',
    ),
    upsert: db.prepare(`
      INSERT INTO oauth_artefacts (model, id, payload, grant_id, client_id, uid, user_code, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
        client_id = excluded.client_id, uid = excluded.uid, user_code = excluded.user_code,
        expires_at = excluded.expires_at`),
    find: db.prepare(
      `SELECT payload, consumed_at FROM oauth_artefacts WHERE model = ? AND id = ? AND ${ALIVE}`,
    ),
    findByUid: db.prepare(
      `SELECT payload, consumed_at FROM oauth_artefacts WHERE model = ? AND uid = ? AND ${ALIVE}`,
    ),
    findByUserCode: db.prepare(
      `SELECT payload, consumed_at FROM oauth_artefacts WHERE model = ? AND user_code = ? AND ${ALIVE}`,
    ),
    consume: db.prepare(
      'UPDATE oauth_artefacts SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL',
    ),
    destroy: db.prepare('DELETE FROM oauth_artefacts WHERE model = ? AND id = ?'),
    grantOf: db.prepare('SELECT grant_id FROM oauth_artefacts WHERE model = ? AND id = ?').pluck(),
    revokeByGrant: db.prepare('DELETE FROM oauth_artefacts WHERE model = ? AND grant_id = ?'),
    sweep: db.prepare('DELETE FROM oauth_artefacts WHERE expires_at IS NOT NULL AND expires_at <= ?'),
    // A grant's session row: the `sid` of the app's access tokens.
    grantSession: db.prepare(`
      INSERT INTO sessions (id, user_id, client_id, created_at)
      SELECT ?, id, ?, ? FROM users WHERE identity_user_id = ? ON CONFLICT DO NOTHING`),
    sessionRevoke: db.prepare(
      'UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
    ),
    secret: db.prepare('SELECT value FROM server_secrets WHERE name = ?').pluck(),
    secretInsert: db.prepare(
      'INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
  };
  let sweptAt = 0;

  const toArtefact = (r: ArtefactRow | undefined): OAuthArtefact | undefined =>
    r && {
      payload: JSON.parse(r.payload) as Record<string, unknown>,
      consumedAt: r.consumed_at,
    };

  const endClientGrants = db.transaction((clientId: string, reason: string) => {
    s.clientArtefactsDelete.run(clientId);
    s.clientSessionsRevoke.run(now(), reason, clientId);
  });

  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

  return {
    createClient(c) {
      const at = now();
      s.clientInsert.run(c.clientId, c.name, JSON.stringify(c.redirectUris), c.type, c.secretHash, at, at);
      return toClient(s.client.get(c.clientId) as ClientRow);
    },
    client(clientId) {
      const r = s.client.get(clientId) as ClientRow | undefined;
      return r && toClient(r);
    },
    listClients: () => (s.clients.all() as ClientRow[]).map(toClient),
    updateClient(clientId, change) {
      const r = s.client.get(clientId) as ClientRow | undefined;
      if (!r) return undefined;
      s.clientUpdate.run(
        change.name ?? r.name,
        change.redirectUris ? JSON.stringify(change.redirectUris) : r.redirect_uris,
        now(),
        clientId,
      );
      return toClient(s.client.get(clientId) as ClientRow);
    },
    rotateSecret(clientId, secretHash) {
      return db.transaction(() => {
        if (!s.client.get(clientId)) return undefined;
        const at = now();
        s.clientSecret.run(secretHash, at, at, clientId);
        endClientGrants(clientId, 'client secret rotated');
        return toClient(s.client.get(clientId) as ClientRow);
      })();
    },
    revokeClient(clientId) {
      return db.transaction(() => {
        const at = now();
        if (s.clientRevoke.run(at, at, clientId).changes === 0) return false;
        endClientGrants(clientId, 'app revoked');
        return true;
      })();
    },

    upsert(model, id, payload, expiresInSeconds) {
      const t = epoch();
      if (Date.now() - sweptAt > SWEEP_INTERVAL_MS) {
        sweptAt = Date.now();
        s.sweep.run(t);
      }
      const expiresAt = expiresInSeconds ? t + expiresInSeconds : null;
      const clientId = str(payload.clientId);
      db.transaction(() => {
        s.upsert.run(
          model,
          id,
          JSON.stringify(payload),
          str(payload.grantId),
          clientId,
          str(payload.uid),
          str(payload.userCode),
          expiresAt,
        );
        const accountId = str(payload.accountId);
        if (model === 'Grant' && accountId) s.grantSession.run(id, clientId, now(), accountId);
      })();
    },
    find: (model, id) => toArtefact(s.find.get(model, id, epoch()) as ArtefactRow | undefined),
    findByUid: (model, uid) => toArtefact(s.findByUid.get(model, uid, epoch()) as ArtefactRow | undefined),
    findByUserCode: (model, userCode) =>
      toArtefact(s.findByUserCode.get(model, userCode, epoch()) as ArtefactRow | undefined),
    consume(model, id) {
      return s.consume.run(epoch(), model, id).changes === 1;
    },
    grantOf(model, id) {
      return (s.grantOf.get(model, id) as string | undefined) ?? null;
    },
    destroy(model, id) {
      db.transaction(() => {
        s.destroy.run(model, id);
        if (model === 'Grant') s.sessionRevoke.run(now(), 'grant revoked', id);
      })();
    },
    revokeByGrantId(model, grantId) {
      db.transaction(() => {
        s.revokeByGrant.run(model, grantId);
        s.sessionRevoke.run(now(), 'grant revoked', grantId);
      })();
    },

    serverSecret(name) {
      const existing = s.secret.get(name) as string | undefined;
      if (existing) return existing;
      s.secretInsert.run(name, randomBytes(32).toString('base64url'), now());
      return s.secret.get(name) as string;
    },
  };
}
