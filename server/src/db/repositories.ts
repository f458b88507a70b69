// Repository interfaces for everything the platform stores, and their one implementation over the
// SQL seam (sql.ts), which runs on the embedded SQLite file or on PostgreSQL. Handlers and services
// depend on the interfaces only. Statements are prepared once; multi-step writes run in
// transactions.
import { randomUUID } from 'node:crypto';
import { type CustomRouteRepository, sqlCustomRoutes } from './custom-routes.js';
import { type OAuthRepository, sqlOAuth } from './oauth.js';
import { type PlatformRepository, sqlPlatform } from './platform.js';
import { type ReportRepository, sqlReports } from './reports.js';
import { type Db, type Dialect, isUniqueViolation } from './sql.js';

export type Role = 'user' | 'admin';
export const KEY_KINDS = ['app', 'partner', 'publishable', 'service'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export interface User {
  id: number;
  identityUserId: string;
  email: string;
  name: string;
  role: Role;
  imageUrl: string | null;
  homeAddress: string | null;
  homeCoords: string | null;
  workAddress: string | null;
  workCoords: string | null;
  dateRegistered: string;
}

export interface ApiKeyRecord {
  id: number;
  kind: KeyKind;
  name: string;
  source: string | null;
  legacyV1: boolean;
  /** The key's first characters, to recognise it in listings (the key itself is never stored). */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface RefreshTokenRecord {
  id: number;
  sessionId: string;
  userId: number;
  clientId: string | null;
  expiresAt: string;
  rotatedAt: string | null;
  sessionRevokedAt: string | null;
}

export interface SigningKey {
  kid: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: string;
}

export interface Disruption {
  /** `<source>:<number>`. */
  id: string;
  source: string;
  city: string;
  name: string;
  notes: string;
  severity: 'avoid' | 'closed';
  location: [number, number];
  startDate: string;
  startMinute: number;
  endDate: string;
  endMinute: number;
  /** OSM ways the disruption covers (an avoidance window on them while it is active). */
  wayIds: number[];
  /** The feed's own id of an imported entry (WZDx feature id). */
  externalId: string | null;
}

export type NewDisruption = Omit<Disruption, 'id' | 'wayIds' | 'externalId'> & {
  wayIds?: number[];
  externalId?: string | null;
};

export class ConflictError extends Error {}

export interface DisruptionRepository {
  create(d: NewDisruption): Disruption;
  /** By the number of its `<source>:<number>` id. */
  byNumber(n: number): Disruption | undefined;
  /** Every disruption of a city (or all cities) not ended before `fromDate`, newest first. */
  list(city: string | undefined, fromDate: string): Disruption[];
  /** Replaces an entry's fields (not its source); the updated entry, or undefined. */
  update(n: number, d: NewDisruption): Disruption | undefined;
  /**
   * Makes a source's entries for a city exactly `entries` (matched by `externalId`): new ones are
   * added, known ones updated, missing ones deleted, in one transaction.
   */
  replaceImported(
    source: string,
    city: string,
    entries: NewDisruption[],
  ): { added: number; updated: number; removed: number };
  /** A city's disruptions that have not ended before `fromDate` (city-local YYYY-MM-DD); shared, do not modify. */
  current(city: string, fromDate: string): readonly Disruption[];
}

export interface UserRepository {
  /** Creates a user; throws ConflictError when the email is taken. */
  create(u: { email: string; name: string; passwordHash: string | null; identityUserId?: string }): User;
  byId(id: number): User | undefined;
  byIdentity(identityUserId: string): User | undefined;
  byEmail(email: string): User | undefined;
  passwordHash(id: number): string | null;
  setRole(email: string, role: Role): User | undefined;
  /** The account bound to an outside identity provider's (issuer, subject), if any. */
  byExternalIdentity(issuer: string, subject: string): User | undefined;
  /**
   * Makes a fresh account (a new random identity_user_id, role `user`) bound to an outside
   * (issuer, subject). The provider's email is kept when no account has it, else a placeholder.
   */
  createExternal(e: { issuer: string; subject: string; email: string | null }): User;
  /** The outside identity an account is bound to, if it was made for one. */
  externalIdentity(userId: number): { issuer: string; subject: string } | undefined;
  /** Sets the role of the account bound to (issuer, subject); undefined when there is none. */
  setExternalRole(issuer: string, subject: string, role: Role): User | undefined;
  list(): User[];
}

export interface ApiKeyRepository {
  create(k: {
    kind: KeyKind;
    name: string;
    source: string | null;
    legacyV1: boolean;
    prefix: string;
    keyHash: string;
  }): ApiKeyRecord;
  /** The key with this digest (a shared record, do not modify). */
  byHash(keyHash: string): ApiKeyRecord | undefined;
  byId(id: number): ApiKeyRecord | undefined;
  list(): ApiKeyRecord[];
  /** Revokes a key; false when there is no such key or it was already revoked. */
  revoke(id: number): boolean;
  touch(id: number, at: string): void;
}

export interface SessionRepository {
  create(userId: number, clientId: string | null): string;
  addRefreshToken(sessionId: string, tokenHash: string, expiresAt: string): void;
  findRefreshToken(tokenHash: string): RefreshTokenRecord | undefined;
  /** Marks a refresh token used; false when it already was (a replay). */
  markRotated(tokenId: number): boolean;
  revoke(sessionId: string, reason: string): void;
  isRevoked(sessionId: string): boolean;
}

export interface SigningKeyRepository {
  active(): SigningKey[];
  /** Every key, retired ones too (for sealing them all again under a new secret key). */
  all(): SigningKey[];
  /**
   * Stores `k` unless an active key exists, in one writing transaction: processes starting together
   * on a fresh database all end up with the first one stored. True when `k` was stored.
   */
  addIfNone(k: Omit<SigningKey, 'createdAt'>): boolean;
  setPrivate(kid: string, privateJwk: string): void;
}

export interface Repositories {
  users: UserRepository;
  apiKeys: ApiKeyRepository;
  sessions: SessionRepository;
  signingKeys: SigningKeyRepository;
  disruptions: DisruptionRepository;
  platform: PlatformRepository;
  oauth: OAuthRepository;
  reports: ReportRepository;
  customRoutes: CustomRouteRepository;
  /**
   * Each city's routing sequence: bumped (in the writing transaction) by every write to road
   * changes or disruptions, whichever process makes it; each process polls it to keep its engines
   * in step (reports/sync.ts).
   */
  routingSequence(): Map<string, number>;
  /**
   * A number that moves when another process may have written a routing change (PostgreSQL's
   * NOTIFY), or null when the sequence must simply be polled (SQLite).
   */
  routingSignal(): number | null;
  /** Which store this is. */
  readonly dialect: Dialect;
  /** Runs `fn` atomically. */
  transaction<T>(fn: () => T): T;
  close(): void;
}

const now = () => new Date().toISOString();

interface UserRow {
  id: number;
  identity_user_id: string;
  email: string;
  name: string;
  role: Role;
  image_url: string | null;
  home_address: string | null;
  home_coords: string | null;
  work_address: string | null;
  work_coords: string | null;
  date_registered: string;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  identityUserId: r.identity_user_id,
  email: r.email,
  name: r.name,
  role: r.role,
  imageUrl: r.image_url,
  homeAddress: r.home_address,
  homeCoords: r.home_coords,
  workAddress: r.work_address,
  workCoords: r.work_coords,
  dateRegistered: r.date_registered,
});

interface KeyRow {
  id: number;
  kind: KeyKind;
  name: string;
  source: string | null;
  legacy_v1: number;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  source: r.source,
  legacyV1: r.legacy_v1 === 1,
  prefix: r.prefix,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

const USER_COLUMNS =
  'id, identity_user_id, email, name, role, image_url, home_address, home_coords, work_address, work_coords, date_registered';
const KEY_COLUMNS = 'id, kind, name, source, legacy_v1, prefix, created_at, revoked_at, last_used_at';

/**
 * Read-through caches for the lookups every routing request makes (its API key, the city's
 * disruptions). The repository methods that write those tables clear them at once; commits by
 * another process (the admin CLI, another server) move the store's cache version (sql.ts: SQLite's
 * `PRAGMA data_version`, PostgreSQL's NOTIFY). So a revoked key is refused, and a new disruption
 * seen, from the next request on.
 */
export class ReadCache<V> {
  private generation = -1;
  private entries = new Map<string, V>();
  /**
   * The entries of the generation before: answers while the store cannot be reached. A change
   * notified just before an outage (a key's last use, written by the request before) moves the
   * generation on; routing with a key read a moment ago beats a 503 for a store that is down.
   */
  private previous = new Map<string, V>();

  constructor(
    private readonly version: () => number,
    private readonly limit = 10_000,
  ) {}

  get(key: string, load: () => V): V {
    const g = this.version();
    if (g !== this.generation || this.entries.size >= this.limit) {
      if (this.entries.size > 0) this.previous = this.entries;
      this.entries = new Map();
      this.generation = g;
    }
    let v = this.entries.get(key);
    if (v === undefined && !this.entries.has(key)) {
      try {
        v = load();
      } catch (err) {
        if (!(err as { unavailable?: boolean }).unavailable || !this.previous.has(key)) throw err;
        return this.previous.get(key) as V;
      }
      this.entries.set(key, v);
    }
    return v as V;
  }

  clear(): void {
    this.entries.clear();
    this.previous.clear();
  }
}

export function createRepositories(db: Db): Repositories {
  const dbVersion = () => db.cacheVersion();
  const routingSequence = db.prepare('SELECT city, seq FROM routing_sequence');
  const keyCache = new ReadCache<ApiKeyRecord | undefined>(dbVersion);
  const disruptionCache = new ReadCache<Disruption[]>(dbVersion, 1000);
  const s = {
    userInsert: db.prepare(
      'INSERT INTO users (identity_user_id, email, name, password_hash, date_registered) VALUES (?, ?, ?, ?, ?)',
    ),
    userById: db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`),
    userByIdentity: db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE identity_user_id = ?`),
    userByEmail: db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?`),
    userHash: db.prepare('SELECT password_hash FROM users WHERE id = ?'),
    userSetRole: db.prepare('UPDATE users SET role = ? WHERE email = ?'),
    userSetRoleById: db.prepare('UPDATE users SET role = ? WHERE id = ?'),
    userByExternal: db.prepare(
      `SELECT ${USER_COLUMNS} FROM users WHERE id = (SELECT user_id FROM external_identities WHERE issuer = ? AND subject = ?)`,
    ),
    externalInsert: db.prepare(
      'INSERT INTO external_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)',
    ),
    externalOf: db.prepare('SELECT issuer, subject FROM external_identities WHERE user_id = ?'),
    userList: db.prepare(`SELECT ${USER_COLUMNS} FROM users ORDER BY id`),
    keyInsert: db.prepare(
      'INSERT INTO api_keys (kind, name, source, legacy_v1, prefix, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    keyByHash: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`),
    keyById: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`),
    keyList: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`),
    keyRevoke: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    keyTouch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    sessionInsert: db.prepare(
      'INSERT INTO sessions (id, user_id, client_id, created_at) VALUES (?, ?, ?, ?)',
    ),
    sessionRevoke: db.prepare(
      'UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
    ),
    sessionRevoked: db.prepare('SELECT revoked_at FROM sessions WHERE id = ?'),
    refreshInsert: db.prepare(
      'INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ),
    refreshFind: db.prepare(
      `SELECT r.id, r.session_id, s.user_id, s.client_id, r.expires_at, r.rotated_at, s.revoked_at
       FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ?`,
    ),
    refreshRotate: db.prepare('UPDATE refresh_tokens SET rotated_at = ? WHERE id = ? AND rotated_at IS NULL'),
    signingActive: db.prepare(
      'SELECT kid, private_jwk, public_jwk, created_at FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC',
    ),
    signingAll: db.prepare(
      'SELECT kid, private_jwk, public_jwk, created_at FROM signing_keys ORDER BY created_at',
    ),
    signingSetPrivate: db.prepare('UPDATE signing_keys SET private_jwk = ? WHERE kid = ?'),
    signingInsert: db.prepare(
      'INSERT INTO signing_keys (kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?)',
    ),
    disruptionInsert: db.prepare(
      `INSERT INTO disruptions (source, city, name, notes, severity, lon, lat, start_date, start_minute, end_date, end_minute, created_at, way_ids, external_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    disruptionsCurrent: db.prepare('SELECT * FROM disruptions WHERE city = ? AND end_date >= ? ORDER BY id'),
    disruptionById: db.prepare('SELECT * FROM disruptions WHERE id = ?'),
    disruptionsAll: db.prepare(
      'SELECT * FROM disruptions WHERE (CAST(? AS TEXT) IS NULL OR city = ?) AND end_date >= ? ORDER BY id DESC',
    ),
    disruptionUpdate: db.prepare(
      `UPDATE disruptions SET city = ?, name = ?, notes = ?, severity = ?, lon = ?, lat = ?, start_date = ?,
       start_minute = ?, end_date = ?, end_minute = ?, way_ids = ?, external_id = ?, updated_at = ? WHERE id = ?`,
    ),
    disruptionsOfSource: db.prepare('SELECT id, external_id FROM disruptions WHERE source = ? AND city = ?'),
    disruptionDelete: db.prepare('DELETE FROM disruptions WHERE id = ?'),
  };

  const users: UserRepository = {
    create({ email, name, passwordHash, identityUserId }) {
      try {
        const info = s.userInsert.run(identityUserId ?? randomUUID(), email, name, passwordHash, now());
        return toUser(s.userById.get(info.lastInsertRowid) as UserRow);
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new ConflictError('email already registered');
        }
        throw err;
      }
    },
    byId: (id) => {
      const r = s.userById.get(id) as UserRow | undefined;
      return r && toUser(r);
    },
    byIdentity: (identityUserId) => {
      const r = s.userByIdentity.get(identityUserId) as UserRow | undefined;
      return r && toUser(r);
    },
    byEmail: (email) => {
      const r = s.userByEmail.get(email) as UserRow | undefined;
      return r && toUser(r);
    },
    passwordHash: (id) =>
      (s.userHash.get(id) as { password_hash: string | null } | undefined)?.password_hash ?? null,
    setRole(email, role) {
      s.userSetRole.run(role, email);
      return users.byEmail(email);
    },
    list: () => (s.userList.all() as UserRow[]).map(toUser),
    byExternalIdentity(issuer, subject) {
      const r = s.userByExternal.get(issuer, subject) as UserRow | undefined;
      return r && toUser(r);
    },
    createExternal: ({ issuer, subject, email }) =>
      db
        .transaction(() => {
          // Two first requests of one rider may race; the second finds the first's account.
          const existing = users.byExternalIdentity(issuer, subject);
          if (existing) return existing;
          const identityUserId = randomUUID();
          const free = email !== null && !users.byEmail(email);
          const user = users.create({
            identityUserId,
            email: free ? email : `${identityUserId}@external.invalid`,
            name: '',
            passwordHash: null,
          });
          s.externalInsert.run(issuer, subject, user.id, now());
          return user;
        })
        .immediate(),
    externalIdentity: (userId) => s.externalOf.get(userId) as { issuer: string; subject: string } | undefined,
    setExternalRole(issuer, subject, role) {
      const user = users.byExternalIdentity(issuer, subject);
      if (!user) return undefined;
      s.userSetRoleById.run(role, user.id);
      return users.byId(user.id);
    },
  };

  const apiKeys: ApiKeyRepository = {
    create({ kind, name, source, legacyV1, prefix, keyHash }) {
      const info = s.keyInsert.run(kind, name, source, legacyV1 ? 1 : 0, prefix, keyHash, now());
      keyCache.clear();
      return toKey(s.keyById.get(info.lastInsertRowid) as KeyRow);
    },
    byHash: (keyHash) =>
      keyCache.get(keyHash, () => {
        const r = s.keyByHash.get(keyHash) as KeyRow | undefined;
        return r && toKey(r);
      }),
    byId: (id) => {
      const r = s.keyById.get(id) as KeyRow | undefined;
      return r && toKey(r);
    },
    list: () => (s.keyList.all() as KeyRow[]).map(toKey),
    revoke: (id) => {
      const revoked = s.keyRevoke.run(now(), id).changes === 1;
      keyCache.clear();
      return revoked;
    },
    // The last-used stamp is not part of what the key cache is used for.
    touch: (id, at) => {
      s.keyTouch.run(at, id);
    },
  };

  const sessions: SessionRepository = {
    create(userId, clientId) {
      const id = randomUUID();
      s.sessionInsert.run(id, userId, clientId, now());
      return id;
    },
    addRefreshToken(sessionId, tokenHash, expiresAt) {
      s.refreshInsert.run(tokenHash, sessionId, now(), expiresAt);
    },
    findRefreshToken(tokenHash) {
      const r = s.refreshFind.get(tokenHash) as
        | {
            id: number;
            session_id: string;
            user_id: number;
            client_id: string | null;
            expires_at: string;
            rotated_at: string | null;
            revoked_at: string | null;
          }
        | undefined;
      return (
        r && {
          id: r.id,
          sessionId: r.session_id,
          userId: r.user_id,
          clientId: r.client_id,
          expiresAt: r.expires_at,
          rotatedAt: r.rotated_at,
          sessionRevokedAt: r.revoked_at,
        }
      );
    },
    markRotated: (tokenId) => s.refreshRotate.run(now(), tokenId).changes === 1,
    revoke(sessionId, reason) {
      s.sessionRevoke.run(now(), reason, sessionId);
    },
    isRevoked(sessionId) {
      const r = s.sessionRevoked.get(sessionId) as { revoked_at: string | null } | undefined;
      return r === undefined || r.revoked_at !== null;
    },
  };

  const toSigningKey = (r: { kid: string; private_jwk: string; public_jwk: string; created_at: string }) => ({
    kid: r.kid,
    privateJwk: r.private_jwk,
    publicJwk: r.public_jwk,
    createdAt: r.created_at,
  });
  const signingKeys: SigningKeyRepository = {
    active: () => (s.signingActive.all() as Parameters<typeof toSigningKey>[0][]).map(toSigningKey),
    all: () => (s.signingAll.all() as Parameters<typeof toSigningKey>[0][]).map(toSigningKey),
    addIfNone: (k) =>
      db
        .transaction(() => {
          if (s.signingActive.all().length > 0) return false;
          s.signingInsert.run(k.kid, k.privateJwk, k.publicJwk, now());
          return true;
        })
        .immediate(),
    setPrivate(kid, privateJwk) {
      s.signingSetPrivate.run(privateJwk, kid);
    },
  };

  interface DisruptionRow {
    id: number;
    source: string;
    city: string;
    name: string;
    notes: string;
    severity: 'avoid' | 'closed';
    lon: number;
    lat: number;
    start_date: string;
    start_minute: number;
    end_date: string;
    end_minute: number;
    way_ids: string;
    external_id: string | null;
  }
  const toDisruption = (r: DisruptionRow): Disruption => ({
    id: `${r.source}:${r.id}`,
    source: r.source,
    city: r.city,
    name: r.name,
    notes: r.notes,
    severity: r.severity,
    location: [r.lon, r.lat],
    startDate: r.start_date,
    startMinute: r.start_minute,
    endDate: r.end_date,
    endMinute: r.end_minute,
    wayIds: JSON.parse(r.way_ids) as number[],
    externalId: r.external_id,
  });
  const disruptionValues = (d: NewDisruption) =>
    [
      d.city,
      d.name,
      d.notes,
      d.severity,
      d.location[0],
      d.location[1],
      d.startDate,
      d.startMinute,
      d.endDate,
      d.endMinute,
      JSON.stringify(d.wayIds ?? []),
      d.externalId ?? null,
    ] as const;
  const disruptionByNumber = (n: number) => {
    const r = s.disruptionById.get(n) as DisruptionRow | undefined;
    return r && toDisruption(r);
  };
  const disruptions: DisruptionRepository = {
    create(d) {
      const info = s.disruptionInsert.run(
        d.source,
        d.city,
        d.name,
        d.notes,
        d.severity,
        d.location[0],
        d.location[1],
        d.startDate,
        d.startMinute,
        d.endDate,
        d.endMinute,
        now(),
        JSON.stringify(d.wayIds ?? []),
        d.externalId ?? null,
      );
      disruptionCache.clear();
      return disruptionByNumber(Number(info.lastInsertRowid)) as Disruption;
    },
    byNumber: disruptionByNumber,
    list: (city, fromDate) =>
      (s.disruptionsAll.all(city ?? null, city ?? null, fromDate) as DisruptionRow[]).map(toDisruption),
    update(n, d) {
      const changed = s.disruptionUpdate.run(...disruptionValues(d), now(), n).changes === 1;
      disruptionCache.clear();
      return changed ? disruptionByNumber(n) : undefined;
    },
    replaceImported(source, city, entries) {
      const counts = { added: 0, updated: 0, removed: 0 };
      db.transaction(() => {
        const known = new Map(
          (s.disruptionsOfSource.all(source, city) as { id: number; external_id: string | null }[]).map(
            (r) => [r.external_id, r.id],
          ),
        );
        const seen = new Set<number>();
        for (const e of entries) {
          const id = known.get(e.externalId ?? null);
          if (id !== undefined && !seen.has(id)) {
            s.disruptionUpdate.run(...disruptionValues(e), now(), id);
            seen.add(id);
            counts.updated++;
          } else {
            disruptions.create({ ...e, source, city });
            counts.added++;
          }
        }
        for (const id of known.values()) {
          if (!seen.has(id)) {
            s.disruptionDelete.run(id);
            counts.removed++;
          }
        }
      })();
      disruptionCache.clear();
      return counts;
    },
    current: (city, fromDate) =>
      disruptionCache.get(`${city}|${fromDate}`, () =>
        (s.disruptionsCurrent.all(city, fromDate) as DisruptionRow[]).map(toDisruption),
      ),
  };

  return {
    users,
    apiKeys,
    sessions,
    signingKeys,
    disruptions,
    platform: sqlPlatform(db),
    oauth: sqlOAuth(db),
    reports: sqlReports(db),
    customRoutes: sqlCustomRoutes(db),
    routingSequence: () =>
      new Map((routingSequence.all() as { city: string; seq: number }[]).map((r) => [r.city, r.seq])),
    routingSignal: () => db.routingSignal(),
    dialect: db.dialect,
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
    close: () => db.close(),
  };
}
