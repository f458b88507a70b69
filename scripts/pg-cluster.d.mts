export interface TestPostgres {
  /** The superuser's URL of the cluster's `postgres` database. */
  url: string;
  /** Stops the cluster and removes its files. */
  stop(): void;
}
export function startPostgres(options?: { durable?: boolean }): Promise<TestPostgres>;
