// POST /explain-supersafe/ (v1): one generated sentence on how the SuperSafe route differs from the
// most direct one, or two to three from the client's context. The wording is server/src/explain/'s.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../errors.js';
import { contextSchema, parseContext } from '../../explain/context.js';
import { explain } from '../../explain/explain.js';
import { cityFor } from '../../routing/directions.js';
import { departureIn } from '../../routing/time.js';
import { departureTime, lonLat } from '../directions/v2.js';

/** The spec's four 400 messages (the fourth, CROSS_CITY_ROUTE, is the routing layer's). */
export const BAD_POINTS = 'origin and destination must be [lon, lat] arrays';
export const BAD_NIGHTTIME = 'nighttime must be a boolean';
export const BAD_DEPARTURE = 'departure_time is not a valid wall-clock time';

/** The request as documented (OpenAPI); the handler checks it itself, to answer the spec's messages. */
const body = z.object({
  origin: lonLat,
  destination: lonLat,
  nighttime: z.boolean().default(false),
  departure_time: departureTime.optional(),
  context: contextSchema.optional(),
});

const response = z.object({
  summary: z.string().nullable(),
  identical: z.boolean(),
  no_route: z.literal(true).optional(),
});

const isLonLat = (v: unknown): v is [number, number] =>
  Array.isArray(v) &&
  v.length === 2 &&
  v.every((x) => typeof x === 'number' && Number.isFinite(x)) &&
  Math.abs(v[0] as number) <= 180 &&
  Math.abs(v[1] as number) <= 90;

const explainRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/explain-supersafe/',
    {
      config: { access: { allow: ['app', 'partner', 'user'] }, rateClass: 'explain' },
      attachValidation: true,
      schema: {
        tags: ['routing'],
        summary: 'One generated sentence on why the SuperSafe route differs from the most direct one',
        body,
        response: { 200: response },
      },
    },
    async (request) => {
      const raw = (request.body ?? {}) as Record<string, unknown>;
      const req = typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
      if (!isLonLat(req.origin) || !isLonLat(req.destination)) {
        throw new HttpError(400, BAD_POINTS, 'longitude in [-180, 180], latitude in [-90, 90]');
      }
      if (req.nighttime !== undefined && typeof req.nighttime !== 'boolean') {
        throw new HttpError(400, BAD_NIGHTTIME);
      }
      const when = req.departure_time;
      if (when !== undefined && (typeof when !== 'string' || !departureTime.safeParse(when).success)) {
        throw new HttpError(400, BAD_DEPARTURE, 'YYYY-MM-DDTHH:mm, city time, no offset');
      }
      let context: ReturnType<typeof parseContext> | undefined;
      if (req.context !== undefined) {
        context = parseContext(req.context);
        if ('error' in context) throw new HttpError(400, context.error);
      }
      const city = cityFor(app.engine, [req.origin, req.destination]);
      let departure: ReturnType<typeof departureIn>;
      try {
        departure = departureIn(when as string | undefined, city.timezone);
      } catch {
        // A time the city's clocks skip (spring forward).
        throw new HttpError(400, BAD_DEPARTURE, 'that time does not exist in the city (clocks go forward)');
      }
      return explain(app.repos, {
        city,
        origin: req.origin,
        destination: req.destination,
        departure,
        night: city.hasLightingData && req.nighttime === true,
        context: context && 'context' in context ? context.context : undefined,
        snapRule: app.engine,
      });
    },
  );
};

export default explainRoutes;
