// Builds the Fastify application: external plugins, then application services, then routes.
// Listening, logging destinations and shutdown belong to server.ts; tests build the app and inject.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import enginePlugin from './plugins/engine.js';
import errorsPlugin from './plugins/errors.js';
import healthRoutes from './routes/health/index.js';

export interface BuildOptions {
  config: Config;
  logger?: FastifyServerOptions['logger'];
}

export async function buildApp({ config, logger = false }: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    // The spec's paths end with a slash; a request without it is answered as if it had one.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(errorsPlugin);
  await app.register(enginePlugin, { config });
  await app.register(healthRoutes);

  return app;
}
