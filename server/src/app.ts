// Builds the Fastify application: error handling, storage, the routing layer (versions, methods,
// OpenAPI), credentials and rate limits, application services, then routes. Listening, logging
// destinations and shutdown belong to server.ts; tests build the app and inject.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { LogSink } from './logsink.js';
import authPlugin from './plugins/auth.js';
import enginePlugin from './plugins/engine.js';
import errorsPlugin from './plugins/errors.js';
import filesPlugin from './plugins/files.js';
import functionsPlugin from './plugins/functions.js';
import gbfsPlugin from './plugins/gbfs.js';
import limitsPlugin from './plugins/limits.js';
import oauthPlugin from './plugins/oauth.js';
import openapiPlugin from './plugins/openapi.js';
import reportsPlugin from './plugins/reports.js';
import storagePlugin from './plugins/storage.js';
import versionsPlugin from './plugins/versions.js';
import type { RateLimitStore } from './ratelimit.js';
import adminDisruptionRoutes from './routes/admin/disruptions.js';
import adminKeyRoutes from './routes/admin/keys.js';
import adminOAuthClientRoutes from './routes/admin/oauth-clients.js';
import adminReportRoutes from './routes/admin/reports.js';
import authRoutes from './routes/auth/index.js';
import directionsV1 from './routes/directions/v1.js';
import directionsV2 from './routes/directions/v2.js';
import eventsRoutes from './routes/events/index.js';
import explainRoutes from './routes/explain/index.js';
import functionsRoutes from './routes/functions/index.js';
import healthRoutes from './routes/health/index.js';
import mapRoutes from './routes/maps/index.js';
import customRouteRoutes from './routes/multi-modal/custom-routes.js';
import multiModalRoutes from './routes/multi-modal/index.js';
import reportRoutes from './routes/reports/index.js';
import reviewRoutes from './routes/review/index.js';
import safetyMapRoutes from './routes/safety-map/index.js';
import userRoutes from './routes/users/index.js';

export interface BuildOptions {
  config: Config;
  logger?: FastifyServerOptions['logger'];
  /** A shared rate-limit store for several processes; in-process by default. */
  rateLimitStore?: RateLimitStore;
  /** The log destination, when the caller made one (server.ts); reported by /health/. */
  logSink?: LogSink;
  /**
   * Whether to return only once every city graph has loaded or failed (true, the default: tests and
   * benchmarks route right after). server.ts passes false: it listens at once while the graphs load
   * in the background (`app.engine.ready` resolves when they are in; /health/ shows each city).
   */
  waitForCities?: boolean;
}

export async function buildApp({
  config,
  logger = false,
  rateLimitStore,
  logSink,
  waitForCities = true,
}: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    trustProxy: config.trustProxy,
    // A whole-request deadline: a body that stalls (or trickles) is cut when it passes, with 408.
    requestTimeout: config.limits.requestTimeoutMs,
    bodyLimit: config.limits.maxBodyBytes,
    // City graphs load after registration (below), but a plugin may still take a while (migrating a
    // large store); no plugin is cut at Fastify's 10 s default.
    pluginTimeout: 0,
    http: {
      headersTimeout: config.limits.headersTimeoutMs,
      // How often Node checks those deadlines (30 s by default, which would let them run over).
      connectionsCheckingInterval: Math.min(1000, config.limits.headersTimeoutMs),
    },
    // The spec's paths end with a slash; a request without it is answered as if it had one.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(errorsPlugin, { logSink: logSink ?? null });
  await app.register(limitsPlugin, { config });
  await app.register(storagePlugin, { config });
  await app.register(versionsPlugin, { config });
  await app.register(openapiPlugin, { config });
  await app.register(authPlugin, { config, rateLimitStore });
  await app.register(enginePlugin, { config });
  await app.register(reportsPlugin, { config });
  await app.register(filesPlugin, { config });
  await app.register(oauthPlugin, { config });
  await app.register(functionsPlugin, { config });
  await app.register(gbfsPlugin, { config });

  await app.register(healthRoutes, { config });
  await app.register(authRoutes);
  await app.register(adminKeyRoutes);
  await app.register(adminOAuthClientRoutes);
  await app.register(directionsV2);
  await app.register(directionsV1);
  await app.register(explainRoutes);
  await app.register(multiModalRoutes, { config });
  await app.register(customRouteRoutes);
  await app.register(userRoutes);
  await app.register(eventsRoutes);
  await app.register(functionsRoutes);
  await app.register(reportRoutes);
  await app.register(adminReportRoutes);
  await app.register(adminDisruptionRoutes);
  await app.register(safetyMapRoutes);
  await app.register(reviewRoutes);
  await app.register(mapRoutes);

  // Last: 405 and 410 answers for every path registered above.
  await app.register(fp(async (instance) => instance.finishRoutes()));

  // The city graphs load in the background once everything that sets a city up as it arrives
  // (EngineService.onCity) is registered.
  const loaded = app.engine.start();
  if (waitForCities) await loaded;
  return app;
}
