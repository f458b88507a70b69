// Bike-share systems as an application service: one GbfsSystem per configured system
// (QUIETWAY_GBFS_SYSTEMS), refreshed in the background from start-up. Start-up does not wait for the
// feeds: a system answers once its first fetch lands, and a failing one is only left out.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { GbfsSystem } from '../gbfs/client.js';

export interface GbfsService {
  systems: GbfsSystem[];
  /** The systems serving a city. */
  forCity(cityId: string): GbfsSystem[];
  /** Resolves once every system has tried each of its feeds once (tests and benchmarks). */
  ready(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    gbfs: GbfsService;
  }
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const g = config.gbfs;
    const systems = g.systems.map(
      (s) =>
        new GbfsSystem(
          s,
          {
            timeoutMs: g.timeoutMs,
            staleSeconds: g.staleSeconds,
            minRefreshSeconds: g.minRefreshSeconds,
            maxRefreshSeconds: 3600,
          },
          app.log,
        ),
    );
    const started = Promise.all(systems.map((s) => s.start())).then(() => undefined);
    app.decorate('gbfs', {
      systems,
      forCity: (cityId: string) => systems.filter((s) => s.city === cityId),
      ready: () => started,
    });
    app.addHook('onClose', async () => {
      for (const s of systems) s.stop();
    });
  },
  { name: 'gbfs' },
);
