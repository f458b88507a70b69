// POST /directions/v2/: turn-by-turn cycling (SuperSafe or Direct) and walking routes.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { plan } from '../../routing/directions.js';

export const lonLat = z.tuple([
  z.number().min(-180, 'longitude must be in [-180, 180]').max(180, 'longitude must be in [-180, 180]'),
  z.number().min(-90, 'latitude must be in [-90, 90]').max(90, 'latitude must be in [-90, 90]'),
]);

/** `YYYY-MM-DDTHH:mm` on a real calendar day (whether the wall-clock time exists in the city's zone is checked once the city is known). */
export const departureTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/, 'must be YYYY-MM-DDTHH:mm (city time, no offset)')
  .refine((v) => {
    const d = new Date(`${v}:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 16) === v;
  }, 'is not a valid date and time');

export const routingAccess = {
  access: { allow: ['app' as const, 'partner' as const, 'user' as const], oauth: 'accept' as const },
  rateClass: 'directions' as const,
};

const body = z.object({
  coordinates: z.array(lonLat).min(2, 'at least 2 waypoints').max(25, 'at most 25 waypoints'),
  profile: z.enum(['cycling', 'walking']).default('cycling'),
  supersafe: z.boolean().default(true),
  bearing: z.number().min(0).lt(360, 'must be in [0, 360)').optional(),
  departure_time: departureTime.optional(),
  nighttime: z.boolean().optional(),
});

const ROUTE_OPEN = Buffer.from('{"route":');

const directionsV2: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/directions/v2/',
    {
      config: routingAccess,
      schema: {
        tags: ['routing'],
        summary: 'Turn-by-turn cycling (SuperSafe or Direct) and walking directions',
        body,
      },
    },
    async (request, reply) => {
      const req = request.body;
      const p = await plan(app.engine, app.repos, {
        coordinates: req.coordinates,
        profile: req.profile,
        supersafe: req.supersafe,
        bearing: req.bearing,
        departure_time: req.departure_time,
        nighttime: req.nighttime,
      });
      const cycling = req.profile === 'cycling';
      const out = p.output;
      const metadata = {
        profile: req.profile,
        ...(cycling ? { supersafe: req.supersafe } : {}),
        ...(cycling && p.city.hasLightingData ? { nighttime: p.nighttime } : {}),
        waypoint_count: req.coordinates.length,
      };
      const base = {
        search_id: p.searchId,
        graph_version: cycling ? p.city.graphVersion : null,
        sublabel: p.nighttime ? 'Prefers well-lit roads' : null,
      };
      if (!out) return { route: null, waypoints: [], ...base, metadata };
      const rest = JSON.stringify({
        waypoints: out.waypoints.map((w) => ({ name: w.name, location: w.location })),
        ...base,
        ...(p.disruptions ? { disruptions: p.disruptions } : {}),
        metadata,
      });
      // The engine wrote the route object (the bulk of the response, as UTF-8 bytes); the rest is
      // spliced beside it.
      return reply
        .type('application/json; charset=utf-8')
        .send(Buffer.concat([ROUTE_OPEN, out.routeJson, Buffer.from(`,${rest.slice(1)}`)]));
    },
  );
};

export default directionsV2;
