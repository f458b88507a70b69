// Opening the store: the embedded SQLite file (the default) or PostgreSQL when a database URL is
// configured (several server processes or nodes sharing one store). Either way the schema is
// brought up to date at open, once even when several processes start together, and everything
// else talks to it through the repositories.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, postgresMigration } from './migrations.js';
import { PgDb } from './pg.js';
import { type Db, SqliteDb } from './sql.js';

export type { Db } from './sql.js';

/** Where the store is: `databaseUrl` (postgres://…) wins over the SQLite file. */
export interface StoreLocation {
  databasePath: string;
  databaseUrl?: string | null;
}

/** Opens (creating if needed) the configured store and brings its schema up to date. */
export function openStore(where: StoreLocation): Db {
  return where.databaseUrl ? openPostgres(where.databaseUrl) : openDatabase(where.databasePath);
}

/**
 * The SQLite file: WAL journal (readers never wait for the writer, a crash loses no committed
 * write), foreign keys on, numbered migrations applied in one transaction each.
 */
export function openDatabase(file: string): SqliteDb {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  migrate(raw);
  return new SqliteDb(raw);
}

/** PostgreSQL: connects, then applies the migrations it lacks (see migratePostgres). */
export function openPostgres(url: string): PgDb {
  const db = new PgDb(url);
  try {
    migratePostgres(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

const tooNew = (version: number, latest: number) =>
  new Error(`database schema version ${version} is newer than this server (${latest}); upgrade the server`);

/**
 * Applies every migration newer than the database's `user_version`, each in its own transaction.
 * Each takes the write lock first and reads the version inside it, so several processes starting
 * on one database at once migrate it once (the others wait, then find it done).
 */
export function migrate(db: Database.Database): number {
  const latest = MIGRATIONS.length;
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() > latest) throw tooNew(version(), latest);
  for (let v = version(); v < latest; v++) {
    const m = MIGRATIONS[v] as (typeof MIGRATIONS)[number];
    db.transaction(() => {
      if (version() !== v) return;
      db.exec(m.sql);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  return latest;
}

/** The session-level advisory lock held while migrating, so several processes migrate once. */
const MIGRATION_LOCK = 7_411_000;

/**
 * The same numbered migrations in PostgreSQL's dialect (migrations.ts), each in its own
 * transaction, the version kept in `schema_version`. Holds an advisory lock throughout, so
 * processes starting together on a fresh database migrate it once.
 */
export function migratePostgres(db: PgDb): number {
  const latest = MIGRATIONS.length;
  db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const version = () =>
      (db.query('SELECT max(version) AS v FROM schema_version').rows[0] as { v: number | null }).v ?? 0;
    if (version() > latest) throw tooNew(version(), latest);
    for (let v = version(); v < latest; v++) {
      db.transaction(() => {
        db.exec(postgresMigration(v));
        db.query('DELETE FROM schema_version');
        db.query('INSERT INTO schema_version (version) VALUES ($1)', [v + 1]);
      })();
    }
  } finally {
    db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    db.schemaChanged();
  }
  return latest;
}
