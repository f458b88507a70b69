// PostgreSQL behind the synchronous SQL seam (sql.ts), for several server processes or nodes
// sharing one store (`QUIETWAY_DATABASE_URL`).
//
// How a synchronous call reaches an asynchronous driver: one worker thread holds a node-postgres
// (`pg`) client. A statement is posted to it over a MessageChannel and the calling thread blocks
// in Atomics.wait until the worker has posted the answer and flipped a word in shared memory; the
// answer is then taken with receiveMessageOnPort. One connection per process serialises every
// statement, so a transaction (BEGIN … COMMIT on that connection) is atomic just as it is with
// SQLite, and the event loop never runs in the middle of one. A round trip costs about a tenth of
// a millisecond on a local server; the routing hot path reads only caches.
//
// The worker also holds a second connection that LISTENs: triggers NOTIFY `quietway_cache` when API
// keys or disruptions change and `quietway_routing` when a routing change is written (migration 8),
// and the worker bumps a counter in shared memory, so asking "did anything change?" costs nothing.
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { Db, RunResult, Statement, Transaction } from './sql.js';

/** Words of the shared state: the reply flag, then the two NOTIFY counters. */
const REPLY = 0;
const CACHE = 1;
const ROUTING = 2;

/** The advisory lock `transaction(fn).immediate()` takes: one writer at a time, like SQLite's. */
const WRITER_LOCK = 7_411_001;

// Plain JavaScript, run with `eval` so the same code works from the TypeScript sources (tests) and
// from the compiled server. `pg` is required by the absolute path the main thread resolved.
const WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const pg = require(workerData.pgPath);
const { port, url } = workerData;
const state = new Int32Array(workerData.state);
const toNumber = (v) => Number(v);
// int8 (COUNT, SUM, BIGINT columns) and numeric come back as JS numbers, as SQLite gives them.
const types = {
  getTypeParser: (oid, format) =>
    oid === 20 || oid === 1700 ? toNumber : pg.types.getTypeParser(oid, format),
};
let client = null;
let listener = null;
let closing = false;
let reconnecting = null;
let lastError = null;
// A lost or hung server must never hold the calling thread long: connecting gives up after
// connectMs, a statement after queryMs, and while the server is away statements fail at once
// (the worker reconnects in the background).
const { connectMs, queryMs } = workerData;

function reply(msg) {
  port.postMessage(msg);
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
}

async function connect() {
  const c = new pg.Client({
    connectionString: url,
    types,
    application_name: 'quietway',
    connectionTimeoutMillis: connectMs,
    query_timeout: queryMs,
    keepAlive: true,
  });
  const lost = (err) => {
    if (client !== c) return;
    client = null;
    lastError = err || new Error('connection ended');
    c.end().catch(() => {});
    reconnect();
  };
  c.on('error', lost);
  c.on('end', () => lost(null));
  await c.connect();
  client = c;
}

function reconnect() {
  if (reconnecting || closing) return;
  reconnecting = (async () => {
    while (!client && !closing) {
      try {
        await connect();
        lastError = null;
      } catch (err) {
        lastError = err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })().finally(() => {
    reconnecting = null;
  });
}

function unavailable() {
  const err = new Error('PostgreSQL is unavailable' + (lastError ? ': ' + lastError.message : ''));
  err.unavailable = true;
  return err;
}

async function listen() {
  if (closing) return;
  const l = new pg.Client({ connectionString: url, application_name: 'quietway-listen' });
  const lost = () => {
    if (listener !== l) return;
    listener = null;
    l.end().catch(() => {});
    setTimeout(() => listen().catch(() => {}), 500).unref();
  };
  l.on('notification', (n) => {
    Atomics.add(state, n.channel === 'quietway_routing' ? 2 : 1, 1);
  });
  l.on('error', lost);
  l.on('end', lost);
  try {
    await l.connect();
    await l.query('LISTEN quietway_cache; LISTEN quietway_routing');
  } catch (err) {
    l.end().catch(() => {});
    setTimeout(() => listen().catch(() => {}), 500).unref();
    throw err;
  }
  listener = l;
  // Whatever was notified while nobody listened: caches are dropped, routing is re-read.
  Atomics.add(state, 1, 1);
  Atomics.add(state, 2, 1);
}

port.on('message', async (m) => {
  try {
    if (m.op === 'connect') {
      await connect();
      lastError = null;
      await listen();
      reply({ id: m.id, rows: [], rowCount: 0 });
      return;
    }
    if (m.op === 'close') {
      closing = true;
      const l = listener;
      listener = null;
      await Promise.allSettled([client && client.end(), l && l.end()]);
      client = null;
      reply({ id: m.id, rows: [], rowCount: 0 });
      port.close();
      return;
    }
    if (!client) {
      reconnect();
      throw unavailable();
    }
    const r = await client.query(
      m.values === undefined
        ? m.text
        : { name: m.name, text: m.text, values: m.values, rowMode: m.rowMode },
    );
    const last = Array.isArray(r) ? r[r.length - 1] : r;
    reply({ id: m.id, rows: last ? last.rows : [], rowCount: last ? last.rowCount || 0 : 0 });
  } catch (err) {
    // No SQLSTATE (a socket error, a time-out), a connection exception (08…) or a server going
    // down (57P…): the store is unavailable, not the statement wrong.
    const sqlstate = typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code) ? err.code : undefined;
    const down = err.unavailable || !sqlstate || /^(08|57P)/.test(sqlstate);
    if (down && client && !err.unavailable) {
      // A time-out or a broken socket: this connection cannot be trusted with the next statement.
      const c = client;
      client = null;
      lastError = err;
      c.end().catch(() => {});
      reconnect();
    }
    reply({
      id: m.id,
      error: { message: err.message, code: sqlstate, detail: err.detail, constraint: err.constraint, unavailable: down },
    });
  }
});
`;

interface Reply {
  id: number;
  rows: unknown[];
  rowCount: number;
  error?: { message: string; code?: string; detail?: string; constraint?: string; unavailable?: boolean };
}

/** An error from PostgreSQL, with its SQLSTATE in `code` (23505: unique violation…). */
export class PostgresError extends Error {
  code?: string;
  detail?: string;
  constraint?: string;
  /** The server could not be reached or went away (the error handler answers 503). */
  unavailable = false;
}

/**
 * `?` and `@name` placeholders to PostgreSQL's `$n`, outside quotes and comments. Named ones keep
 * one number per name; the names, in number order, say how to read the argument object.
 */
export function toPostgresPlaceholders(sql: string): { text: string; names: string[] | null } {
  let out = '';
  let n = 0;
  const names: string[] = [];
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string;
    if (c === "'" || c === '"') {
      const j = sql.indexOf(c, i + 1);
      const end = j < 0 ? sql.length : j + 1;
      out += sql.slice(i, end);
      i = end - 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      const end = j < 0 ? sql.length : j;
      out += sql.slice(i, end);
      i = end - 1;
    } else if (c === '?') {
      out += `$${++n}`;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1)) as RegExpExecArray;
      const name = m[0];
      let k = names.indexOf(name);
      if (k < 0) k = names.push(name) - 1;
      out += `$${k + 1}`;
      i += name.length;
    } else {
      out += c;
    }
  }
  if (n > 0 && names.length > 0) throw new Error('a statement mixes ? and @name placeholders');
  return { text: out, names: names.length > 0 ? names : null };
}

function toValue(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'string' && v.includes('\u0000')) {
    // SQLite stores it; PostgreSQL's text cannot hold it. Refused alike for every statement, as
    // the data exception PostgreSQL would raise (the error handler answers 400).
    const e = new PostgresError('text may not contain the NUL character (U+0000)');
    e.code = '22021';
    throw e;
  }
  return v;
}

class PgStatement implements Statement {
  private plucked = false;

  constructor(
    private readonly db: PgDb,
    private readonly text: string,
    private readonly names: string[] | null,
    private readonly returnsId: boolean,
    /** The server-side prepared statement's name: parsed and planned once per connection. */
    private readonly name: string,
  ) {}

  private values(params: unknown[]): unknown[] {
    if (this.names) {
      const arg = (params[0] ?? {}) as Record<string, unknown>;
      return this.names.map((n) => toValue(arg[n]));
    }
    return params.map(toValue);
  }

  run(...params: unknown[]): RunResult {
    const r = this.db.query(this.text, this.values(params), false, this.name);
    const id = this.returnsId ? (r.rows[0] as { id?: number } | undefined)?.id : undefined;
    return { changes: r.rowCount, lastInsertRowid: id ?? 0 };
  }

  get(...params: unknown[]): unknown {
    const r = this.db.query(this.text, this.values(params), this.plucked, this.name);
    const row = r.rows[0] as unknown[] | undefined;
    return this.plucked ? row?.[0] : row;
  }

  all(...params: unknown[]): unknown[] {
    const r = this.db.query(this.text, this.values(params), this.plucked, this.name);
    return this.plucked ? (r.rows as unknown[][]).map((row) => row[0]) : r.rows;
  }

  pluck(): Statement {
    this.plucked = true;
    return this;
  }
}

export interface PgOptions {
  /** How long a statement may take before the call fails (the server may be gone); 10 s. */
  timeoutMs?: number;
  /** How long connecting may take; 3 s. */
  connectTimeoutMs?: number;
}

export class PgDb implements Db {
  readonly dialect = 'postgres' as const;
  private readonly state: Int32Array;
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private readonly timeoutMs: number;
  private seq = 0;
  private depth = 0;
  private closed = false;
  private idTables: Set<string> | null = null;
  /** Prepared statements' names by text (a text prepared again reuses its name). */
  private readonly names = new Map<string, string>();

  /** Connects (and starts listening) before it returns; throws when the server cannot be reached. */
  constructor(url: string, options: PgOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    const connectMs = options.connectTimeoutMs ?? 3000;
    const shared = new SharedArrayBuffer(4 * 4);
    this.state = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const pgPath = createRequire(import.meta.url).resolve('pg');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The worker gives up first, so its answer (not the caller's time-out) says what happened.
      workerData: { port: port2, url, state: shared, pgPath, connectMs, queryMs: this.timeoutMs - 500 },
      transferList: [port2],
    });
    this.worker.unref();
    try {
      this.call({ op: 'connect' });
    } catch (err) {
      void this.worker.terminate();
      throw new Error(`PostgreSQL at ${redact(url)}: ${(err as Error).message}`);
    }
  }

  private call(msg: Record<string, unknown>): Reply {
    if (this.closed) throw new Error('the PostgreSQL store is closed');
    const id = ++this.seq;
    this.port.postMessage({ ...msg, id });
    const deadline = performance.now() + this.timeoutMs;
    for (;;) {
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const reply = got.message as Reply;
        if (reply.id !== id) continue; // the late answer to a call that timed out
        if (reply.error) {
          const e = new PostgresError(reply.error.message);
          e.code = reply.error.code;
          e.detail = reply.error.detail;
          e.constraint = reply.error.constraint;
          e.unavailable = reply.error.unavailable === true;
          throw e;
        }
        return reply;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        const e = new PostgresError(
          `PostgreSQL did not answer within ${Math.round(this.timeoutMs / 1000)} s`,
        );
        e.unavailable = true;
        throw e;
      }
      Atomics.wait(this.state, REPLY, 0, left);
      Atomics.store(this.state, REPLY, 0);
    }
  }

  query(text: string, values?: unknown[], arrays = false, name?: string): Reply {
    return this.call({ op: 'query', text, values, name, rowMode: arrays ? 'array' : undefined });
  }

  prepare(sql: string): Statement {
    const { text, names } = toPostgresPlaceholders(sql);
    // An INSERT into a table with an integer id reports the new id, as SQLite's lastInsertRowid.
    const insert = /^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)/i.exec(text);
    const returnsId = insert !== null && !/\bRETURNING\b/i.test(text) && this.hasId(insert[1] as string);
    const final = returnsId ? `${text} RETURNING id` : text;
    let name = this.names.get(final);
    if (name === undefined) {
      name = `quietway_${this.names.size + 1}`;
      this.names.set(final, name);
    }
    return new PgStatement(this, final, names, returnsId, name);
  }

  private hasId(table: string): boolean {
    if (!this.idTables) {
      const r = this.query(
        `SELECT table_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND column_name = 'id' AND data_type IN ('integer', 'bigint')`,
        [],
        true,
      );
      this.idTables = new Set((r.rows as string[][]).map((row) => row[0] as string));
    }
    return this.idTables.has(table.toLowerCase());
  }

  /** Forgets what it knew of the schema (after migrations). */
  schemaChanged(): void {
    this.idTables = null;
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): Transaction<A, T> {
    const wrap =
      (immediate: boolean) =>
      (...args: A): T => {
        const savepoint = this.depth > 0 ? `quietway_${this.depth}` : null;
        this.exec(savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN');
        this.depth++;
        let result: T;
        try {
          if (immediate && !savepoint) this.query('SELECT pg_advisory_xact_lock($1)', [WRITER_LOCK]);
          result = fn(...args);
        } catch (err) {
          this.depth--;
          this.rollback(savepoint);
          throw err;
        }
        this.depth--;
        try {
          this.exec(savepoint ? `RELEASE SAVEPOINT ${savepoint}` : 'COMMIT');
        } catch (err) {
          this.rollback(savepoint);
          throw err;
        }
        return result;
      };
    const t = wrap(false) as Transaction<A, T>;
    t.immediate = wrap(true);
    return t;
  }

  private rollback(savepoint: string | null): void {
    try {
      this.exec(savepoint ? `ROLLBACK TO SAVEPOINT ${savepoint}` : 'ROLLBACK');
    } catch {
      // The connection is gone: the server rolls the transaction back itself.
    }
  }

  exec(sql: string): void {
    this.call({ op: 'query', text: sql });
  }

  cacheVersion(): number {
    return Atomics.load(this.state, CACHE);
  }

  routingSignal(): number {
    return Atomics.load(this.state, ROUTING);
  }

  close(): void {
    if (this.closed) return;
    try {
      this.call({ op: 'close' });
    } finally {
      this.closed = true;
      void this.worker.terminate();
    }
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured URL';
  }
}
