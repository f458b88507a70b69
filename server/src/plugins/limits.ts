// What one client may make the server spend before a handler runs (docs/api.md "Limits"): open
// connections per client address, body size per route class, JSON nesting depth (checked by a scan
// before parsing), and connections closed after an error answer whose body was never read. The
// request and headers deadlines are the HTTP server's own (set in app.ts).
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import type { RateClass } from '../ratelimit.js';

/** Routing endpoints take a few coordinates and flags: their bodies are capped far below the rest. */
const ROUTING_CLASSES: ReadonlySet<RateClass> = new Set(['directions', 'multimodal', 'explain']);

export const TOO_MANY_CONNECTIONS = 'Too many connections from this client';

/**
 * The deepest nesting of arrays and objects in a JSON text, stopping as soon as it passes `limit`
 * (a linear scan that skips strings; far cheaper than parsing what it refuses).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Caps open connections per client address; the connection over the cap gets a short 429 and is closed. */
export function capConnections(server: FastifyInstance['server'], perClient: number): void {
  if (perClient <= 0) return;
  const open = new Map<string, number>();
  const body = JSON.stringify({ error: TOO_MANY_CONNECTIONS });
  server.on('connection', (socket: Socket) => {
    const who = socket.remoteAddress ?? '';
    const n = (open.get(who) ?? 0) + 1;
    if (n > perClient) {
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroySoon();
      return;
    }
    open.set(who, n);
    socket.once('close', () => {
      const left = (open.get(who) ?? 1) - 1;
      if (left <= 0) open.delete(who);
      else open.set(who, left);
    });
  });
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const { limits } = config;
    if (limits.maxConnections > 0) app.server.maxConnections = limits.maxConnections;
    capConnections(app.server, limits.maxConnectionsPerClient);

    app.addHook('onRoute', (route) => {
      if (route.config?.rateClass && ROUTING_CLASSES.has(route.config.rateClass) && !route.bodyLimit) {
        route.bodyLimit = limits.maxRoutingBodyBytes;
      }
    });

    // JSON with a nesting check before the parse; the parse itself is Fastify's (which refuses
    // `__proto__` and `constructor.prototype` keys).
    const parse = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body as string;
      if (jsonDepthExceeds(text, limits.maxJsonDepth)) {
        done(
          new HttpError(400, 'Invalid JSON', `nested deeper than ${limits.maxJsonDepth} levels`),
          undefined,
        );
        return;
      }
      parse(request, text, done);
    });

    // An error answered before the body was read (401, 413, 429…): close the connection rather
    // than wait for, or read, the rest of a body no one will use.
    app.addHook('onSend', async (request, reply) => {
      if (reply.statusCode >= 400 && !request.raw.complete) reply.header('Connection', 'close');
    });
  },
  { name: 'limits', dependencies: ['errors'] },
);
