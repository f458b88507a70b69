// POST /multi-modal/v2/ (and the deprecated v1 POST /multi-modal/): the personal bike and the city's
// bike-share options for one trip, with live availability, pricing and app links.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import { DEFAULT_PARKING, ParkingService } from '../../multimodal/parking.js';
import { type CustomRoute, planTrip, writeResponse } from '../../multimodal/plan.js';
import { departureTime, lonLat, routingAccess } from '../directions/v2.js';
import { viewEvent } from '../events/view.js';

const access = { access: routingAccess.access, rateClass: 'multimodal' as const };

const body = z.object({
  origin: lonLat,
  destination: lonLat,
  departure_time: departureTime.optional(),
  nighttime: z.boolean().optional(),
  origin_name: z.string().max(200).optional(),
  destination_name: z.string().max(200).optional(),
  destination_id: z.uuid().optional(),
  custom_route_id: z.uuid().optional(),
  parking_type: z.enum(['ebike', 'regular']).optional(),
  ebike_operator: z.enum(['lime', 'forest']).optional(),
});

const v1Body = z.object({ origin: lonLat, destination: lonLat });

const JSON_TYPE = 'application/json; charset=utf-8';

const multiModal: FastifyPluginAsyncZod<{ config: Config }> = async (app, { config }) => {
  const parking = new ParkingService(
    { ...DEFAULT_PARKING, ...config.parking },
    config.sharedDataDir,
    config.graphDir,
    app.log,
  );
  const services = { systemsFor: app.gbfs.forCity, parking };
  /** The saved custom route a trip names, when it resolves (with its event's details). */
  const customRoute = (id: string | undefined): CustomRoute | null => {
    if (!id) return null;
    const r = app.repos.customRoutes.get(id);
    const e = r ? app.repos.platform.event(r.eventId) : undefined;
    if (!r || !e) return null;
    return { id: r.id, name: r.name, stops: r.stops, event: viewEvent(e) };
  };
  const handle = async (req: z.infer<typeof body>) => {
    const custom = customRoute(req.custom_route_id);
    const { options, destinationParking } = await planTrip(app.engine, app.repos, services, req, custom);
    return writeResponse(randomUUID(), options, destinationParking);
  };

  app.post(
    '/multi-modal/v2/',
    {
      config: access,
      schema: {
        tags: ['routing'],
        summary: 'Personal bike, docked, docked e-bike and dockless bike-share options for a trip',
        body,
      },
    },
    async (request, reply) => reply.type(JSON_TYPE).send(await handle(request.body)),
  );

  // v1 takes origin and destination only.
  app.post(
    '/multi-modal/',
    {
      config: { ...access, access: { ...access.access, legacyV1: true } },
      schema: {
        tags: ['routing'],
        summary: 'Deprecated version 1 of multi-modal routing (origin and destination only)',
        body: v1Body,
      },
    },
    async (request, reply) => reply.type(JSON_TYPE).send(await handle(request.body)),
  );
};

export default multiModal;
