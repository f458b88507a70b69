// Runs the app as a process: structured logs to stdout, listening, and graceful shutdown on
// SIGINT/SIGTERM (in-flight requests finish, then the process exits).
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { LogSink } from './logsink.js';

export async function startServer(config: Config): Promise<FastifyInstance> {
  // Logs go to stdout through a sink that drops lines it cannot write instead of blocking or throwing.
  const logSink = new LogSink(1);
  // Listens at once: the city graphs load in the background (each city routes as soon as its own
  // graph is in; until then its requests answer 503 with Retry-After, and /health/ shows its state).
  const app = await buildApp({
    config,
    logger: { level: config.logLevel, stream: logSink },
    logSink,
    waitForCities: false,
  });
  process.once('exit', () => logSink.flushSync());
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));

  await app.listen({ host: config.host, port: config.port });
  return app;
}
