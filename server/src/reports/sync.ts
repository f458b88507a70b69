// Keeps this process's engines in step with road changes and disruptions written by other server
// processes sharing the database (several processes or nodes behind one load balancer). Every write
// to those tables bumps the city's routing sequence in the same transaction (a trigger, migration 7);
// each process reads the small sequence table every `intervalMs` and re-syncs the cities whose number
// moved (RoadChanges.resync: only the differences reach the engine).
//
// Polling the shared database rather than a message bus: the database is the state of record and
// the counter is written in the very transaction of the change, so no change can be missed or seen
// early (a pub/sub message is lost while a subscriber reconnects), it needs no other component, and
// one indexed read of a table with a row per city every 250 ms costs next to nothing.
//
// On PostgreSQL the same triggers also NOTIFY, and the store counts the notifications in shared
// memory (db/pg.ts): the sequence is read only when that count moved (checked every 25 ms, for
// nothing), and at least every `intervalMs` * 20 in case a notification was lost.
import type { FastifyBaseLogger } from 'fastify';
import type { Repositories } from '../db/repositories.js';
import type { RoadChanges } from './changes.js';

export class RoutingSync {
  private seen: Map<string, number>;
  private timer: NodeJS.Timeout | null = null;
  private signal: number | null;
  private readAt = performance.now();

  /** Reads the sequence now: call before the start-up restore, so nothing written after it is missed. */
  constructor(
    private readonly repos: Repositories,
    private readonly changes: RoadChanges,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = 250,
  ) {
    this.signal = repos.routingSignal();
    this.seen = repos.routingSequence();
  }

  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    const every = this.signal === null ? this.intervalMs : Math.min(this.intervalMs, 25);
    this.timer = setInterval(() => this.poll(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Re-syncs every city whose sequence moved since the last look; the cities re-synced. */
  poll(): string[] {
    const signal = this.repos.routingSignal();
    if (
      signal !== null &&
      signal === this.signal &&
      performance.now() - this.readAt < Math.max(this.intervalMs, 1) * 20
    ) {
      return [];
    }
    let now: Map<string, number>;
    try {
      this.readAt = performance.now();
      now = this.repos.routingSequence();
    } catch (err) {
      // A busy or briefly unavailable database: the next poll tries again.
      this.log.warn({ err }, 'routing sync: sequence not read');
      return [];
    }
    let synced = true;
    const moved: string[] = [];
    for (const [city, seq] of now) {
      if (this.seen.get(city) === seq) continue;
      try {
        this.changes.resync(city);
        this.seen.set(city, seq);
        moved.push(city);
      } catch (err) {
        this.log.error({ err, city }, 'routing sync: city not re-synced (tried again next poll)');
        synced = false;
      }
    }
    if (synced) this.signal = signal;
    return moved;
  }
}
