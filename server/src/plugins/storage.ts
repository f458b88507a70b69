// The database as an application service: opened (and migrated) at start, closed with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { openStore } from '../db/database.js';
import { createRepositories, type Repositories } from '../db/repositories.js';

declare module 'fastify' {
  interface FastifyInstance {
    repos: Repositories;
  }
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const repos = createRepositories(openStore(config));
    app.decorate('repos', repos);
    app.addHook('onClose', async () => repos.close());
  },
  { name: 'storage' },
);
