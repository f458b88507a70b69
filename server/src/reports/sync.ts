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
import type { FastifyBaseLogger } from 'fastify';
import type { Repositories } from '../db/repositories.js';
import type { RoadChanges } from './changes.js';

export class RoutingSync {
  private seen: Map<string, number>;
  private timer: NodeJS.Timeout | null = null;

  /** Reads the sequence now: call before the start-up restore, so nothing written after it is missed. */
  constructor(
    private readonly repos: Repositories,
    private readonly changes: RoadChanges,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = 250,
  ) {
    this.seen = repos.routingSequence();
  }

  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = setInterval(() => this.poll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Re-syncs every city whose sequence moved since the last look; the cities re-synced. */
  poll(): string[] {
    let now: Map<string, number>;
    try {
      now = this.repos.routingSequence();
    } catch (err) {
      // A busy or briefly unavailable database: the next poll tries again.
      this.log.warn({ err }, 'routing sync: sequence not read');
      return [];
    }
    const moved: string[] = [];
    for (const [city, seq] of now) {
      if (this.seen.get(city) === seq) continue;
      try {
        this.changes.resync(city);
        this.seen.set(city, seq);
        moved.push(city);
      } catch (err) {
        this.log.error({ err, city }, 'routing sync: city not re-synced (tried again next poll)');
      }
    }
    return moved;
  }
}
