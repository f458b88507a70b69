export interface TestPostgres {
  /** The superuser's URL of the cluster's `postgres` database. */
  url: string;
  /** Stops the server at once (an outage), keeping its data. */
  halt(): void;
  /** Starts it again after halt(). */
  resume(): void;
  /** Stops the cluster and removes its files. */
  stop(): void;
}
export function startPostgres(options?: { durable?: boolean }): Promise<TestPostgres>;
