// Error handling for every route: validation failures → 400 naming the field, HttpError → its own
// status and body, unknown paths → 404, anything unexpected → 500 with the cause logged, never leaked.
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { PostgresError } from '../db/pg.js';
import {
  HttpError,
  INTERNAL_ERROR,
  isStorageFull,
  STORAGE_FULL,
  STORAGE_UNAVAILABLE,
  UNKNOWN_ENDPOINT,
} from '../errors.js';
import type { LogSink } from '../logsink.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** When a write last failed for lack of space (ms since the epoch), for /health/. */
    storageFull: { lastAt: number | null };
    /** The log destination, when the server process made one (its dropped-line count is in /health/). */
    logSink: LogSink | null;
  }
}

function describeValidation(err: FastifyError): string {
  if (hasZodFastifySchemaValidationErrors(err)) {
    return err.validation
      .map((v) => {
        const where = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
        return where ? `${where}: ${v.message}` : (v.message ?? 'invalid value');
      })
      .join('; ');
  }
  return err.message;
}

export default fp(
  async (app: FastifyInstance, { logSink = null }: { logSink?: LogSink | null }) => {
    app.decorate('storageFull', { lastAt: null as number | null });
    app.decorate('logSink', logSink);
    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (isStorageFull(err)) {
        // Reads keep working; writes wait for space. Said plainly rather than as a 500.
        app.storageFull.lastAt = Date.now();
        request.log.error({ code: err.code }, 'write refused: storage full');
        return reply.status(503).header('Retry-After', '60').send({
          error: STORAGE_FULL,
          details: 'The server cannot save data right now; reading still works.',
        });
      }
      if (err instanceof HttpError) {
        return reply.status(err.statusCode).headers(err.headers).send(err.body());
      }
      if (hasZodFastifySchemaValidationErrors(err) || err.validation) {
        return reply.status(400).send({ error: describeValidation(err) });
      }
      if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
        return reply.status(400).send({ error: 'Invalid JSON' });
      }
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        const limit = request.routeOptions.bodyLimit;
        return reply.status(413).send({
          error: 'Request body too large',
          ...(limit ? { details: `at most ${limit} bytes on this endpoint` } : {}),
        });
      }
      if (err instanceof PostgresError && err.unavailable) {
        // The database server is down or unreachable: said plainly, and briefly (the store
        // reconnects by itself; requests that need no database, such as routing, keep working).
        request.log.error({ msg: err.message }, 'database unavailable');
        return reply.status(503).header('Retry-After', '5').send({
          error: STORAGE_UNAVAILABLE,
          details: 'The server cannot reach its database right now; try again shortly.',
        });
      }
      if (err instanceof PostgresError && err.code?.startsWith('22')) {
        // A data exception (class 22): a value the request carried that PostgreSQL cannot hold
        // (a number out of range, a NUL character in text). The request's fault, said as such.
        request.log.warn({ code: err.code, msg: err.message }, 'value refused by the database');
        return reply.status(400).send({ error: 'Invalid value', details: err.message });
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return reply.status(status).send({ error: err.message });
      }
      request.log.error({ err }, 'unexpected failure');
      return reply.status(500).send({ error: INTERNAL_ERROR });
    });

    app.setNotFoundHandler((_request, reply) => reply.status(404).send({ error: UNKNOWN_ENDPOINT }));
  },
  { name: 'errors' },
);
