// The routing engine as an application service: the native addon plus the city graphs it has loaded.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { native } from '../native.js';

export interface LoadedCity {
  id: string;
  graphVersion: string;
}

export interface EngineService {
  version: string;
  cities(): LoadedCity[];
}

declare module 'fastify' {
  interface FastifyInstance {
    engine: EngineService;
  }
}

export default fp(
  async (app: FastifyInstance, opts: { config: Config }) => {
    const addon = native();
    const cities = new Map<string, LoadedCity>();
    app.log.info({ graphDir: opts.config.graphDir }, 'routing engine %s ready', addon.engineVersion());
    app.decorate('engine', {
      version: addon.engineVersion(),
      cities: () => [...cities.values()],
    });
  },
  { name: 'engine' },
);
