// GET /health/: liveness plus what a self-hoster wants to see first: versions and loaded cities.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SERVER_VERSION } from '../../version.js';

const healthResponse = z.object({
  status: z.literal('ok'),
  version: z.string(),
  engine_version: z.string(),
  uptime_seconds: z.number(),
  cities: z.array(z.object({ id: z.string(), graph_version: z.string() })),
});

const health: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/health/',
    {
      // Public: load balancers and self-hosters' checks call it without credentials.
      config: { access: { public: true } },
      schema: {
        tags: ['health'],
        summary: 'Service health, versions and loaded city graphs',
        response: { 200: healthResponse },
      },
    },
    async () => ({
      status: 'ok' as const,
      version: SERVER_VERSION,
      engine_version: app.engine.version,
      uptime_seconds: Math.round(process.uptime()),
      cities: app.engine.cities().map((c) => ({ id: c.id, graph_version: c.graphVersion })),
    }),
  );
};

export default health;
