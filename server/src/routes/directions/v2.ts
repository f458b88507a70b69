// POST /directions/v2/: turn-by-turn cycling (SuperSafe or Direct) and walking routes.

import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { planPrepared, prepare, respond } from '../../routing/directions.js';
import type { SnappedPoint } from '../../routing/snapping.js';

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

/** OAuth access tokens: accepted on POST /directions/v2/ only (see oauth/scope.ts). */
export const routingAccess = {
  access: { allow: ['app' as const, 'partner' as const, 'user' as const] },
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
const JSON_TYPE = 'application/json; charset=utf-8';

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
      const planRequest = {
        coordinates: req.coordinates,
        profile: req.profile,
        supersafe: req.supersafe,
        bearing: req.bearing,
        departure_time: req.departure_time,
        nighttime: req.nighttime,
      };
      const prepared = prepare(app.engine, app.repos, planRequest);
      const { city, nighttime } = prepared;
      const cycling = req.profile === 'cycling';
      const metadata = {
        profile: req.profile,
        ...(cycling ? { supersafe: req.supersafe } : {}),
        ...(cycling && city.hasLightingData ? { nighttime } : {}),
        waypoint_count: req.coordinates.length,
      };
      const base = {
        search_id: randomUUID(),
        graph_version: cycling ? city.graphVersion : null,
        sublabel: nighttime ? 'Prefers well-lit roads' : null,
      };
      // No route (nothing to snap to within the snap radius, or no path): 200 with the waypoints
      // where each point would have snapped.
      const noRoute = (waypoints: SnappedPoint[]) => ({ route: null, waypoints, ...base, metadata });
      if (prepared.candidates.length === 0) {
        // The usual case: the engine writes the whole body, the members after the waypoints
        // given to it as they will appear.
        const r = await respond(prepared, `,${JSON.stringify({ ...base, metadata }).slice(1)}`);
        return r.body ? reply.type(JSON_TYPE).send(r.body) : noRoute(r.waypoints);
      }
      // Disruptions in force: the route's geometry decides which are near it.
      const p = await planPrepared(prepared);
      const out = p.output;
      if (!out) return noRoute(p.waypoints);
      const rest = JSON.stringify({
        waypoints: p.waypoints,
        ...base,
        ...(p.disruptions ? { disruptions: p.disruptions } : {}),
        metadata,
      });
      return reply
        .type(JSON_TYPE)
        .send(Buffer.concat([ROUTE_OPEN, out.routeJson, Buffer.from(`,${rest.slice(1)}`)]));
    },
  );
};

export default directionsV2;
