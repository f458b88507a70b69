// The embedded SQLite database: one file under the data directory, WAL journal (readers never wait
// for the writer, a crash loses no committed write), foreign keys on, numbered migrations applied
// in one transaction each at open. Everything else talks to it through the repositories.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/** Opens (creating if needed) the database and brings its schema up to date. */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

/**
 * Applies every migration newer than the database's `user_version`, each in its own transaction.
 * Each takes the write lock first and reads the version inside it, so several processes starting
 * on one database at once migrate it once (the others wait, then find it done).
 */
export function migrate(db: Db): number {
  const latest = MIGRATIONS.length;
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() > latest) {
    throw new Error(
      `database schema version ${version()} is newer than this server (${latest}); upgrade the server`,
    );
  }
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
