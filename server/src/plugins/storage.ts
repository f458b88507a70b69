// The database as an application service: opened (and migrated) at start, closed with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { type Repositories, sqliteRepositories } from '../db/repositories.js';

declare module 'fastify' {
  interface FastifyInstance {
    repos: Repositories;
  }
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const repos = sqliteRepositories(openDatabase(config.databasePath));
    app.decorate('repos', repos);
    app.addHook('onClose', async () => repos.close());
  },
  { name: 'storage' },
);
