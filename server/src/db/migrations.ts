// Numbered schema migrations: migration i brings the schema version from i to i + 1 (SQLite's
// `user_version`, PostgreSQL's `schema_version` table). Never edit a migration that has shipped;
// append a new one. Each is written for SQLite; PostgreSQL runs the same one through
// `postgresMigration`, which translates the few type names that differ, or its own `postgres`
// text where the two differ more (triggers).
export interface Migration {
  name: string;
  sql: string;
  /** PostgreSQL's text, where translating `sql` is not enough. */
  postgres?: string;
}

export const MIGRATIONS: Migration[] = [
  {
    name: 'credentials: users, API keys, refresh tokens, signing keys',
    sql: `
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        identity_user_id TEXT NOT NULL UNIQUE,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        name TEXT NOT NULL DEFAULT '',
        password_hash TEXT,
        role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
        image_url TEXT,
        home_address TEXT,
        home_coords TEXT,
        work_address TEXT,
        work_coords TEXT,
        date_registered TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('app', 'partner', 'publishable', 'service')),
        name TEXT NOT NULL,
        source TEXT,
        legacy_v1 INTEGER NOT NULL DEFAULT 0,
        prefix TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        last_used_at TEXT
      );
      -- A session is one sign-in: its refresh tokens form a family (each rotation adds one), and
      -- access tokens name it in their sid claim, so revoking it ends them all.
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        client_id TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        revoked_reason TEXT
      );
      CREATE TABLE refresh_tokens (
        id INTEGER PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        rotated_at TEXT
      );
      CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);
      CREATE TABLE signing_keys (
        kid TEXT PRIMARY KEY,
        private_jwk TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        created_at TEXT NOT NULL,
        retired_at TEXT
      );
    `,
  },
  {
    name: 'disruptions: temporary road disruptions (curated or imported), shown near routes',
    sql: `
      CREATE TABLE disruptions (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        city TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        notes TEXT NOT NULL DEFAULT '',
        severity TEXT NOT NULL CHECK (severity IN ('avoid', 'closed')),
        lon REAL NOT NULL,
        lat REAL NOT NULL,
        start_date TEXT NOT NULL,
        start_minute INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
        end_date TEXT NOT NULL,
        end_minute INTEGER NOT NULL CHECK (end_minute BETWEEN 0 AND 1440),
        created_at TEXT NOT NULL
      );
      CREATE INDEX disruptions_city_end ON disruptions(city, end_date);
    `,
  },
  {
    name: 'rider platform: rides, events, categories, discounts, images',
    sql: `
      CREATE TABLE discounts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        terms TEXT NOT NULL DEFAULT '',
        emoji TEXT NOT NULL DEFAULT ''
      );
      CREATE TABLE categories (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        emoji TEXT NOT NULL DEFAULT ''
      );
      CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        alias TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL DEFAULT '',
        emoji TEXT NOT NULL DEFAULT '',
        image_url TEXT,
        start_time TEXT,
        end_time TEXT,
        is_leisure_route INTEGER NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        destination_name TEXT,
        destination_lat REAL,
        destination_lon REAL,
        area_name TEXT,
        route_distance REAL,
        route_duration REAL,
        route_polyline TEXT,
        city TEXT,
        discount_id INTEGER REFERENCES discounts(id) ON DELETE SET NULL
      );
      CREATE TABLE event_categories (
        event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
        PRIMARY KEY (event_id, category_id)
      );
      CREATE TABLE event_images (
        id INTEGER PRIMARY KEY,
        event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        storage_key TEXT NOT NULL,
        image_url TEXT NOT NULL,
        uploaded_by TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE rides (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        date_started TEXT NOT NULL,
        local_timezone TEXT NOT NULL,
        polyline TEXT NOT NULL DEFAULT '',
        destination_name TEXT,
        destination_address TEXT,
        distance_traveled REAL NOT NULL,
        duration_traveled REAL NOT NULL,
        completed INTEGER NOT NULL DEFAULT 0,
        event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
        weather_conditions TEXT,
        temperature REAL,
        wind_speed REAL,
        weather_fetched_at TEXT,
        weather_display TEXT,
        welcome_message TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX rides_user ON rides(user_id, date_started);
      CREATE TABLE ride_images (
        id INTEGER PRIMARY KEY,
        ride_id INTEGER NOT NULL REFERENCES rides(id) ON DELETE CASCADE,
        image_url TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    name: 'external identities: outside accounts bound by (issuer, subject), never by a local id',
    sql: `
      -- A rider who signs in at an outside identity provider gets a local account of their own, bound
      -- here to the token's (iss, sub). Admin rights are granted to that pair, never read from a token.
      CREATE TABLE external_identities (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id INTEGER NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject)
      );
    `,
  },
  {
    name: "oauth: registered third-party apps, the authorization server's artefacts, server secrets",
    sql: `
      -- A third-party app registered by an admin. Confidential apps keep a secret, stored only as a
      -- SHA-256 digest; rotating it or revoking the app ends the app's grants at once.
      CREATE TABLE oauth_clients (
        client_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('public', 'confidential')),
        secret_hash TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        secret_rotated_at TEXT,
        revoked_at TEXT
      );
      -- oidc-provider's models (sessions, interactions, codes, refresh tokens, grants…) as JSON
      -- payloads. consumed_at keeps single use: a code or refresh token presented again is a replay.
      CREATE TABLE oauth_artefacts (
        model TEXT NOT NULL,
        id TEXT NOT NULL,
        payload TEXT NOT NULL,
        grant_id TEXT,
        client_id TEXT,
        uid TEXT,
        user_code TEXT,
        expires_at INTEGER,
        consumed_at INTEGER,
        PRIMARY KEY (model, id)
      );
      CREATE INDEX oauth_artefacts_grant ON oauth_artefacts(grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oauth_artefacts_client ON oauth_artefacts(client_id) WHERE client_id IS NOT NULL;
      CREATE INDEX oauth_artefacts_uid ON oauth_artefacts(uid) WHERE uid IS NOT NULL;
      CREATE INDEX oauth_artefacts_expiry ON oauth_artefacts(expires_at);
      -- Random secrets the server makes for itself once (cookie signing keys).
      CREATE TABLE server_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    name: 'road reports: reports, accepted road changes, review decisions; disruptions gain ways and feed ids',
    sql: `
      CREATE TABLE reports (
        id INTEGER PRIMARY KEY,
        issue_type TEXT NOT NULL,
        issue_subtype TEXT,
        description TEXT NOT NULL DEFAULT '',
        road_name TEXT NOT NULL DEFAULT '',
        lon REAL NOT NULL,
        lat REAL NOT NULL,
        -- Attribution: the rider's account, or the partner key and its source slug.
        user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
        api_key_id INTEGER REFERENCES api_keys(id) ON DELETE SET NULL,
        source TEXT,
        via TEXT NOT NULL CHECK (via IN ('user', 'partner')),
        seen_route TEXT,
        status TEXT NOT NULL CHECK (status IN ('received', 'in_review', 'accepted', 'closed')),
        summary TEXT,
        city TEXT,
        analysis TEXT,
        proposal TEXT,
        duplicate_of INTEGER REFERENCES reports(id),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX reports_status ON reports(status, id);
      CREATE INDEX reports_city ON reports(city, status);
      CREATE TABLE road_changes (
        id INTEGER PRIMARY KEY,
        city TEXT NOT NULL,
        kind TEXT NOT NULL,
        spec TEXT NOT NULL,
        report_id INTEGER REFERENCES reports(id),
        disruption_id INTEGER REFERENCES disruptions(id),
        status TEXT NOT NULL CHECK (status IN ('active', 'lifted')),
        -- Set when the change could not be applied whole (a way vanished in a rebuild, an engine
        -- API that does not exist yet); the change stays stored and listed for review.
        flag TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        lifted_by TEXT,
        lifted_at TEXT
      );
      CREATE INDEX road_changes_city ON road_changes(city, status);
      CREATE TABLE review_log (
        id INTEGER PRIMARY KEY,
        report_id INTEGER REFERENCES reports(id),
        change_id INTEGER REFERENCES road_changes(id),
        disruption_id INTEGER REFERENCES disruptions(id),
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        before TEXT,
        after TEXT,
        at TEXT NOT NULL
      );
      CREATE INDEX review_log_report ON review_log(report_id);
      ALTER TABLE disruptions ADD COLUMN way_ids TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE disruptions ADD COLUMN external_id TEXT;
      ALTER TABLE disruptions ADD COLUMN updated_at TEXT;
      CREATE UNIQUE INDEX disruptions_external ON disruptions(source, external_id);
    `,
  },
  {
    name: 'custom routes: an event route saved as ordered stops, attached to multi-modal trips by UUID',
    sql: `
      CREATE TABLE custom_routes (
        id TEXT PRIMARY KEY,
        event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        -- JSON array of [lon, lat] stops, 2 to 25, ridden in order
        stops TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX custom_routes_event ON custom_routes(event_id);
    `,
  },
  {
    name: 'routing sequence: a counter per city bumped by every write that changes routing, polled by each server process',
    sql: `
      CREATE TABLE routing_sequence (city TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
      -- Bumped in the writing transaction itself, by whichever code (or process) writes: road
      -- changes (closures, re-weightings, turn bans, windows, weighting changes; a flag alone does
      -- not change routing) and disruptions (curated, imported, one-off windows).
      CREATE TRIGGER road_changes_routing_insert AFTER INSERT ON road_changes BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (NEW.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
      CREATE TRIGGER road_changes_routing_update AFTER UPDATE OF city, kind, spec, status ON road_changes BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (OLD.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
        INSERT INTO routing_sequence (city, seq) SELECT NEW.city, 1 WHERE NEW.city <> OLD.city
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
      CREATE TRIGGER road_changes_routing_delete AFTER DELETE ON road_changes BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (OLD.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
      CREATE TRIGGER disruptions_routing_insert AFTER INSERT ON disruptions BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (NEW.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
      CREATE TRIGGER disruptions_routing_update AFTER UPDATE ON disruptions BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (OLD.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
        INSERT INTO routing_sequence (city, seq) SELECT NEW.city, 1 WHERE NEW.city <> OLD.city
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
      CREATE TRIGGER disruptions_routing_delete AFTER DELETE ON disruptions BEGIN
        INSERT INTO routing_sequence (city, seq) VALUES (OLD.city, 1)
          ON CONFLICT (city) DO UPDATE SET seq = seq + 1;
      END;
    `,
    // PostgreSQL: one trigger function does what the six SQLite triggers do, and NOTIFYs the
    // city on `quietway_routing`, which every process LISTENs to (pg.ts), so a change reaches the
    // other processes' engines at once rather than at their next poll. API keys and disruptions
    // NOTIFY `quietway_cache` so every process drops its read caches (SQLite's data_version).
    postgres: `
      CREATE TABLE routing_sequence (city TEXT PRIMARY KEY, seq INTEGER NOT NULL);
      CREATE FUNCTION quietway_bump_routing(c TEXT) RETURNS void LANGUAGE sql AS $$
        INSERT INTO routing_sequence (city, seq) VALUES (c, 1)
          ON CONFLICT (city) DO UPDATE SET seq = routing_sequence.seq + 1;
        SELECT pg_notify('quietway_routing', c);
      $$;
      CREATE FUNCTION quietway_routing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM quietway_bump_routing(NEW.city);
        ELSE
          PERFORM quietway_bump_routing(OLD.city);
          IF TG_OP = 'UPDATE' AND NEW.city <> OLD.city THEN
            PERFORM quietway_bump_routing(NEW.city);
          END IF;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER road_changes_routing
        AFTER INSERT OR DELETE OR UPDATE OF city, kind, spec, status ON road_changes
        FOR EACH ROW EXECUTE FUNCTION quietway_routing_changed();
      CREATE TRIGGER disruptions_routing AFTER INSERT OR UPDATE OR DELETE ON disruptions
        FOR EACH ROW EXECUTE FUNCTION quietway_routing_changed();
      CREATE FUNCTION quietway_cache_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('quietway_cache', TG_TABLE_NAME);
        RETURN NULL;
      END $$;
      -- Not on last_used_at: stamping a key's use must not empty every process's key cache.
      CREATE TRIGGER api_keys_cache
        AFTER INSERT OR DELETE OR UPDATE OF kind, name, source, legacy_v1, key_hash, revoked_at ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION quietway_cache_changed();
      CREATE TRIGGER disruptions_cache AFTER INSERT OR UPDATE OR DELETE ON disruptions
        FOR EACH STATEMENT EXECUTE FUNCTION quietway_cache_changed();
    `,
  },
];

/**
 * Migration `i` in PostgreSQL's dialect: its own text when it has one, else the SQLite text with
 * the types that differ translated: an integer primary key becomes an identity column, integers
 * 64-bit (as SQLite's are), REAL a double, a case-insensitive unique text (COLLATE NOCASE) a citext.
 */
export function postgresMigration(i: number): string {
  const m = MIGRATIONS[i] as Migration;
  if (m.postgres !== undefined) return m.postgres;
  const sql = m.sql
    .replace(/\bINTEGER PRIMARY KEY\b/g, 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bTEXT NOT NULL UNIQUE COLLATE NOCASE\b/g, 'CITEXT NOT NULL UNIQUE')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\s+WITHOUT ROWID/g, '');
  if (/COLLATE NOCASE|AUTOINCREMENT|CREATE TRIGGER/i.test(sql)) {
    throw new Error(`migration ${i + 1} needs its own PostgreSQL text`);
  }
  // citext is a trusted extension (PostgreSQL 13+): the database's owner may create it.
  return i === 0 ? `CREATE EXTENSION IF NOT EXISTS citext;\n${sql}` : sql;
}
