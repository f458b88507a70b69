// Saved custom routes of an event (`/api/admin/events/{event_id}/custom-routes/`): the event's
// creator or an admin saves a route as ordered stops; multi-modal trips attach it by its UUID.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Credential } from '../../auth/access.js';
import type { CustomRouteRecord } from '../../db/custom-routes.js';
import { HttpError } from '../../errors.js';
import { lonLat } from '../directions/v2.js';

const MANAGE = {
  access: { allow: ['user' as const], oauth: 'forbid' as const },
  rateClass: 'admin' as const,
};

const params = z.object({ event_id: z.coerce.number().int().positive() });
const routeParams = params.extend({ route_id: z.uuid() });
const body = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  stops: z.array(lonLat).min(2, 'at least 2 stops').max(25, 'at most 25 stops'),
});

const view = (r: CustomRouteRecord) => ({
  id: r.id,
  event_id: r.eventId,
  name: r.name,
  stops: r.stops,
  created_at: r.createdAt,
});

const customRoutes: FastifyPluginAsyncZod = async (app) => {
  const manageable = (id: number, c: Credential) => {
    const e = app.repos.platform.event(id);
    if (!e) throw new HttpError(404, 'Event not found');
    if (c.type !== 'user' || (c.user.role !== 'admin' && c.user.identityUserId !== e.createdBy)) {
      throw new HttpError(403, 'You do not have permission to manage this event');
    }
    return e;
  };

  app.post(
    '/api/admin/events/:event_id/custom-routes/',
    {
      config: MANAGE,
      schema: { tags: ['events'], summary: 'Save a custom route (ordered stops) for an event', params, body },
    },
    async (req, reply) => {
      const e = manageable(req.params.event_id, req.credential);
      const c = req.credential;
      const created = app.repos.customRoutes.create({
        id: randomUUID(),
        eventId: e.id,
        name: req.body.name ?? e.name,
        stops: req.body.stops,
        createdBy: c.type === 'user' ? c.user.identityUserId : '',
      });
      return reply.status(201).send(view(created));
    },
  );

  app.get(
    '/api/admin/events/:event_id/custom-routes/',
    { config: MANAGE, schema: { tags: ['events'], summary: "An event's custom routes", params } },
    async (req) => {
      manageable(req.params.event_id, req.credential);
      return { custom_routes: app.repos.customRoutes.forEvent(req.params.event_id).map(view) };
    },
  );

  app.delete(
    '/api/admin/events/:event_id/custom-routes/:route_id/',
    { config: MANAGE, schema: { tags: ['events'], summary: 'Delete a custom route', params: routeParams } },
    async (req) => {
      manageable(req.params.event_id, req.credential);
      const r = app.repos.customRoutes.get(req.params.route_id);
      if (!r || r.eventId !== req.params.event_id) throw new HttpError(404, 'Custom route not found');
      app.repos.customRoutes.delete(r.id);
      return { success: true, message: `Custom route ${r.id} deleted` };
    },
  );
};

export default customRoutes;
