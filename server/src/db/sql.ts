// The SQL seam the repositories are written against: prepared statements, transactions and a
// change signal, with two implementations: the embedded SQLite file (better-sqlite3, the default)
// and PostgreSQL (pg.ts, for several server processes or nodes sharing one store).
//
// The seam is synchronous, like better-sqlite3: a statement returns its rows, a transaction runs
// a plain function. The repositories, and the ~110 call sites in handlers and services that use
// them, stay synchronous for both stores. SQL is written once in the dialect both accept (SQLite
// >= 3.35 has RETURNING and `ON CONFLICT … DO NOTHING/UPDATE`); `?` (positional) and `@name`
// (named, one object argument) placeholders work for both.
import type BetterSqlite3 from 'better-sqlite3';

export type Dialect = 'sqlite' | 'postgres';

export interface RunResult {
  changes: number;
  /** The `id` of the row an INSERT added (tables with an integer `id` column), else 0. */
  lastInsertRowid: number | bigint;
}

export interface Statement {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** From now on, `get` and `all` give each row's first column instead of the row. */
  pluck(): Statement;
}

export interface Transaction<A extends unknown[], T> {
  (...args: A): T;
  /** Runs as the store's single writer from its first statement (SQLite's BEGIN IMMEDIATE). */
  immediate(...args: A): T;
}

export interface Db {
  readonly dialect: Dialect;
  prepare(sql: string): Statement;
  /** Wraps `fn` so that it runs atomically; nested calls become savepoints. */
  transaction<A extends unknown[], T>(fn: (...args: A) => T): Transaction<A, T>;
  exec(sql: string): void;
  /**
   * A number that moves when a commit may have changed what the read caches hold (API keys,
   * disruptions). SQLite: `PRAGMA data_version` (other connections' commits), read at most once a
   * millisecond. PostgreSQL: a counter bumped by NOTIFY from triggers on those tables, read from
   * shared memory for free.
   */
  cacheVersion(): number;
  /**
   * A number that moves when another process may have written a routing change (NOTIFY), or null
   * when the store has no such signal and the routing sequence must be polled (SQLite).
   */
  routingSignal(): number | null;
  close(): void;
}

/** A unique or primary key refused the write (either store). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** The better-sqlite3 connection behind the seam. */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  private readonly dataVersion: () => number;

  constructor(readonly raw: BetterSqlite3.Database) {
    const stmt = raw.prepare('SELECT data_version FROM pragma_data_version()').pluck();
    let value = stmt.get() as number;
    let readAt = performance.now();
    this.dataVersion = () => {
      const now = performance.now();
      if (now - readAt >= 1) {
        value = stmt.get() as number;
        readAt = now;
      }
      return value;
    };
  }

  prepare(sql: string): Statement {
    return this.raw.prepare(sql) as unknown as Statement;
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): Transaction<A, T> {
    return this.raw.transaction(fn) as unknown as Transaction<A, T>;
  }

  exec(sql: string): void {
    this.raw.exec(sql);
  }

  cacheVersion(): number {
    return this.dataVersion();
  }

  routingSignal(): null {
    return null;
  }

  close(): void {
    this.raw.close();
  }
}
