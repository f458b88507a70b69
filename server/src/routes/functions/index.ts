// The functions API: place search (`/functions/v1/place-search/autocomplete` and `/details`) and
// current weather (`/functions/v1/weather`). Any authenticated caller: a user session, a publishable
// key or a service key. Autocomplete and details share one rate limit (class `place_search`).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../errors.js';
import { NotConfiguredError, UpstreamError } from '../../upstream.js';
import { WEATHER_CACHE_SECONDS } from '../../weather/service.js';

const access = {
  allow: ['user' as const, 'publishable' as const, 'service' as const],
  oauth: 'forbid' as const,
};
const placeConfig = { access, rateClass: 'place_search' as const };

const latitude = z
  .number()
  .min(-90, 'latitude must be in [-90, 90]')
  .max(90, 'latitude must be in [-90, 90]');
const longitude = z
  .number()
  .min(-180, 'longitude must be in [-180, 180]')
  .max(180, 'longitude must be in [-180, 180]');

const autocompleteBody = z.object({
  input: z
    .string()
    .max(256, 'must be at most 256 characters')
    .refine((v) => v.trim().length > 0, 'must not be empty'),
  sessionToken: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  origin: z.object({ latitude, longitude }).optional(),
  bbox: z
    .tuple([longitude, latitude, longitude, latitude])
    .refine(([minLng, minLat, maxLng, maxLat]) => minLng < maxLng && minLat < maxLat, {
      message: 'must be [minLng, minLat, maxLng, maxLat] with min less than max',
    })
    .optional(),
});

const detailsQuery = z.object({
  placeId: z.string().min(1, 'is required').max(1024, 'is too long'),
  sessionToken: z.string().max(128, 'must be at most 128 characters').optional(),
});

/** Upstream failures as the spec's place-search answers: 503, 504 or 502 with `upstream_status`. */
function placeSearchError(err: unknown): never {
  if (err instanceof NotConfiguredError) throw new HttpError(503, err.message);
  if (err instanceof UpstreamError) {
    if (err.reason === 'timeout') throw new HttpError(504, 'Place search provider timed out', err.message);
    throw new HttpError(502, 'Place search provider failed', err.message, { upstream_status: err.status });
  }
  throw err;
}

/** A coordinate query parameter (`latitude` or its alias `lat`): a finite number in range. */
function coordinate(raw: unknown, alias: unknown, name: string, limit: number): number {
  const v = raw ?? alias;
  if (v === undefined) throw new HttpError(400, `${name} is required`);
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) throw new HttpError(400, `${name} must be a number`);
  if (n < -limit || n > limit) throw new HttpError(400, `${name} must be in [-${limit}, ${limit}]`);
  return n;
}

const functionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/functions/v1/place-search/autocomplete',
    {
      config: placeConfig,
      schema: {
        tags: ['places'],
        summary: 'Place predictions for what was typed: unrestricted and bounded to a rectangle',
        body: autocompleteBody,
      },
    },
    async (req) => {
      const { input, sessionToken, origin, bbox } = req.body;
      try {
        return await app.places.autocomplete({ input, sessionToken, origin, bbox });
      } catch (err) {
        placeSearchError(err);
      }
    },
  );

  app.get(
    '/functions/v1/place-search/details',
    {
      config: placeConfig,
      schema: {
        tags: ['places'],
        summary: 'The place a prediction names (ends the session)',
        querystring: detailsQuery,
      },
    },
    async (req) => {
      let details: Awaited<ReturnType<typeof app.places.details>>;
      try {
        details = await app.places.details(req.query.placeId, req.query.sessionToken);
      } catch (err) {
        placeSearchError(err);
      }
      if (!details) throw new HttpError(404, 'Place not found');
      return details;
    },
  );

  // Any other place-search path is an unknown subroute.
  app.all('/functions/v1/place-search/*', { config: placeConfig, schema: { hide: true } }, async () => {
    throw new HttpError(404, 'Unknown place-search route');
  });

  app.get(
    '/functions/v1/weather',
    {
      config: { access, rateClass: 'weather' },
      schema: {
        tags: ['weather'],
        summary: 'Current weather at a coordinate (cached 10 minutes)',
        querystring: z.object({
          latitude: z.string().optional(),
          lat: z.string().optional(),
          longitude: z.string().optional(),
          lon: z.string().optional(),
        }),
      },
    },
    async (req, reply) => {
      const q = req.query;
      const lat = coordinate(q.latitude, q.lat, 'latitude', 90);
      const lon = coordinate(q.longitude, q.lon, 'longitude', 180);
      try {
        const weather = await app.weather.current(lat, lon);
        reply.header('Cache-Control', `public, max-age=${WEATHER_CACHE_SECONDS}`);
        return weather;
      } catch (err) {
        if (err instanceof NotConfiguredError) throw new HttpError(503, err.message);
        if (err instanceof UpstreamError) throw new HttpError(500, 'Weather provider failed', err.message);
        throw err;
      }
    },
  );
};

export default functionsRoutes;
