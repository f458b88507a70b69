// Events: public reading (by id or alias, nearby), management under /api/admin/events/ (any rider
// creates; the creator or an admin changes and deletes), categories, discounts and images.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Credential } from '../../auth/access.js';
import type { EventInput, EventRecord } from '../../db/platform.js';
import { HttpError } from '../../errors.js';
import { contains } from '../../routing/coverage.js';
import { distanceToLine } from '../../routing/directions.js';
import { decodePolyline } from '../../routing/polyline.js';
import { receiveImages } from '../../storage/uploads.js';
import { viewEvent } from './view.js';

const PUBLIC = { access: { public: true }, rateClass: 'events' as const };
const MANAGE = {
  access: { allow: ['user' as const], oauth: 'forbid' as const },
  rateClass: 'admin' as const,
};
const ADMIN = {
  access: { allow: ['user' as const], admin: true, oauth: 'forbid' as const },
  rateClass: 'admin' as const,
};
const MILE_M = 1609.344;

/** Metres from a point to an event: to its route's geometry, or to its destination. */
function distanceTo(e: EventRecord, p: [number, number]): number | null {
  if (e.route?.polyline) return distanceToLine(p, decodePolyline(e.route.polyline));
  if (e.destination) {
    const d = [e.destination.longitude, e.destination.latitude];
    return distanceToLine(p, [d, d]);
  }
  return null;
}

const eventBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).default(''),
    emoji: z.string().max(16).default(''),
    image_url: z.url().nullable().default(null),
    start_time: z.iso.datetime({ offset: true }).nullable().default(null),
    end_time: z.iso.datetime({ offset: true }).nullable().default(null),
    is_leisure_route: z.boolean().default(false),
    destination: z
      .object({
        name: z.string().max(200).default(''),
        latitude: z.number().min(-90).max(90),
        longitude: z.number().min(-180).max(180),
        area_name: z.string().max(200).nullable().default(null),
      })
      .nullable()
      .default(null),
    route: z
      .object({
        distance: z.number().min(0),
        duration: z.number().min(0),
        polyline: z.string().min(1).max(500_000),
      })
      .nullable()
      .default(null),
    category_ids: z.array(z.number().int().positive()).max(20).default([]),
    discount_id: z.number().int().positive().nullable().default(null),
  })
  .refine((b) => b.is_leisure_route || (b.start_time !== null && b.end_time !== null), {
    message: 'events need start_time and end_time (leisure routes have none)',
    path: ['start_time'],
  })
  .refine((b) => !b.start_time || !b.end_time || Date.parse(b.end_time) > Date.parse(b.start_time), {
    message: 'must be after start_time',
    path: ['end_time'],
  })
  .refine((b) => b.destination !== null || b.route !== null, {
    message: 'an event has a destination, a route, or both',
    path: ['destination'],
  });

const eventsRoutes: FastifyPluginAsyncZod = async (app) => {
  const repo = app.repos.platform;

  /** The city the route starts in (against the configured cities' borders); null without a route. */
  const cityOf = (polyline: string | undefined): string | null => {
    if (!polyline) return null;
    const start = decodePolyline(polyline)[0] as [number, number] | undefined;
    if (!start) return null;
    const areas = [
      ...app.engine.configured,
      ...app.engine.cities().flatMap((c) => c.coverage.map((a) => ({ ...a, name: c.name }))),
    ];
    return areas.find((a) => contains(a, start))?.name ?? null;
  };

  const toInput = (b: z.infer<typeof eventBody>): EventInput => {
    for (const id of b.category_ids) {
      if (!repo.categories().some((c) => c.id === id))
        throw new HttpError(400, `category_ids: no category ${id}`);
    }
    if (b.discount_id !== null && !repo.discounts().some((d) => d.id === b.discount_id)) {
      throw new HttpError(400, `discount_id: no discount ${b.discount_id}`);
    }
    return {
      name: b.name,
      description: b.description,
      emoji: b.emoji,
      imageUrl: b.image_url,
      startTime: b.is_leisure_route ? null : b.start_time,
      endTime: b.is_leisure_route ? null : b.end_time,
      isLeisureRoute: b.is_leisure_route,
      destination: b.destination
        ? {
            name: b.destination.name,
            latitude: b.destination.latitude,
            longitude: b.destination.longitude,
            areaName: b.destination.area_name,
          }
        : null,
      route: b.route,
      city: cityOf(b.route?.polyline),
      discountId: b.discount_id,
      categoryIds: b.category_ids,
    };
  };

  /** The event, if the caller may manage it (its creator or an admin); 404 or 403 otherwise. */
  const manageable = (id: number, c: Credential): EventRecord => {
    const e = repo.event(id);
    if (!e) throw new HttpError(404, 'Event not found');
    if (c.type !== 'user' || (c.user.role !== 'admin' && c.user.identityUserId !== e.createdBy)) {
      throw new HttpError(403, 'You do not have permission to manage this event');
    }
    return e;
  };

  app.get(
    '/events/nearby/',
    {
      config: PUBLIC,
      schema: {
        tags: ['events'],
        summary:
          'Events near a point: upcoming or ongoing, then leisure routes, then those ended within 14 days',
        querystring: z.object({
          latitude: z.coerce.number().min(-90).max(90),
          longitude: z.coerce.number().min(-180).max(180),
          radius: z.coerce.number().positive().max(200_000).default(1000),
          city: z.string().optional(),
          categories: z.string().optional(),
          area: z.string().optional(),
        }),
      },
    },
    async (req) => {
      const { latitude, longitude, radius, city, categories, area } = req.query;
      const p: [number, number] = [longitude, latitude];
      const wanted = categories
        ?.split(',')
        .map((c) => c.trim().toLowerCase())
        .filter(Boolean);
      const now = Date.now();
      const fortnight = 14 * 86_400_000;
      const groups: [number, number, EventRecord][] = [];
      for (const e of repo.allEvents()) {
        if (city && (e.city ?? '').toLowerCase() !== city.toLowerCase()) continue;
        if (area && (e.destination?.areaName ?? '').toLowerCase() !== area.toLowerCase()) continue;
        if (wanted?.length && !e.categories.some((c) => wanted.includes(c.name.toLowerCase()))) continue;
        const d = distanceTo(e, p);
        const end = e.endTime ? Date.parse(e.endTime) : null;
        let group: number;
        if (e.isLeisureRoute) group = 1;
        else if (end === null || end > now) group = 0;
        else if (now - end <= fortnight) group = 2;
        else continue;
        // Leisure routes are always listed; the others only within the radius.
        if (group !== 1 && (d === null || d > radius)) continue;
        groups.push([group, d ?? Number.POSITIVE_INFINITY, e]);
      }
      groups.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      return {
        events: groups.map(([, d, e]) => ({
          ...viewEvent(e),
          distance: Number.isFinite(d) ? Math.round((d / MILE_M) * 100) / 100 : null,
        })),
      };
    },
  );

  app.get(
    '/events/:id_or_alias/',
    {
      config: PUBLIC,
      schema: {
        tags: ['events'],
        summary: 'An event by numeric id or alias',
        params: z.object({ id_or_alias: z.string() }),
      },
    },
    async (req, reply) => {
      const key = req.params.id_or_alias;
      if (/^\d+$/.test(key)) {
        const e = repo.event(Number(key));
        if (!e) return reply.status(404).send({ error: 'Event not found', event_id: Number(key) });
        return viewEvent(e);
      }
      const e = repo.eventByAlias(key);
      if (!e) return reply.status(404).send({ error: 'Event not found', alias: key });
      return viewEvent(e);
    },
  );

  app.get(
    '/api/admin/events/',
    { config: MANAGE, schema: { tags: ['events'], summary: 'Events the caller manages (all, for admins)' } },
    async (req) => {
      const c = req.credential;
      const mine = (e: EventRecord) =>
        c.type === 'user' && (c.user.role === 'admin' || e.createdBy === c.user.identityUserId);
      return {
        events: repo
          .allEvents()
          .filter(mine)
          .map((e) => viewEvent(e)),
      };
    },
  );

  app.post(
    '/api/admin/events/',
    { config: MANAGE, schema: { tags: ['events'], summary: 'Create an event', body: eventBody } },
    async (req, reply) => {
      const c = req.credential;
      if (c.type !== 'user') throw new HttpError(401, 'Endpoint requires one of: user');
      return reply.status(201).send(viewEvent(repo.createEvent(toInput(req.body), c.user.identityUserId)));
    },
  );

  const idParams = z.object({ event_id: z.coerce.number().int().positive() });

  app.get(
    '/api/admin/events/:event_id/',
    {
      config: MANAGE,
      schema: { tags: ['events'], summary: 'An event the caller manages', params: idParams },
    },
    async (req) => viewEvent(manageable(req.params.event_id, req.credential)),
  );

  app.put(
    '/api/admin/events/:event_id/',
    {
      config: MANAGE,
      schema: { tags: ['events'], summary: 'Replace an event', params: idParams, body: eventBody },
    },
    async (req) => {
      manageable(req.params.event_id, req.credential);
      return viewEvent(repo.updateEvent(req.params.event_id, toInput(req.body)));
    },
  );

  app.delete(
    '/api/admin/events/:event_id/',
    {
      config: MANAGE,
      schema: { tags: ['events'], summary: 'Delete an event and its images', params: idParams },
    },
    async (req) => {
      const e = manageable(req.params.event_id, req.credential);
      repo.deleteEvent(e.id);
      for (const i of e.images) await app.storage.delete(i.storageKey);
      return { success: true, message: `Event ${e.id} deleted` };
    },
  );

  app.post(
    '/api/admin/events/:event_id/images/',
    {
      config: MANAGE,
      schema: {
        tags: ['events'],
        summary: 'Upload images (multipart, field `images`, several files)',
        params: idParams,
      },
    },
    async (req, reply) => {
      const e = repo.event(req.params.event_id);
      if (!e) throw new HttpError(404, 'Event not found');
      manageable(e.id, req.credential);
      const c = req.credential;
      const uploader = c.type === 'user' ? c.user.identityUserId : '';
      const files = await receiveImages(req, app.storage, uploader, app.uploadLimits, {
        fields: ['images'],
        maxFiles: 20,
        label: 'images',
        keyFor: (ext) => `events/${e.id}/${randomUUID()}.${ext}`,
      });
      let images: { id: number; image_url: string; created_at: string }[];
      try {
        images = app.repos.transaction(() =>
          files.map((f) => {
            const img = repo.addEventImage(e.id, f.key, f.url, uploader);
            return { id: img.id, image_url: img.image_url, created_at: img.created_at };
          }),
        );
      } catch (err) {
        await Promise.allSettled(files.map((f) => app.storage.delete(f.key)));
        throw err;
      }
      return reply.status(201).send({ success: true, message: `${images.length} image(s) uploaded`, images });
    },
  );

  app.delete(
    '/api/admin/events/:event_id/images/:image_id/',
    {
      config: MANAGE,
      schema: {
        tags: ['events'],
        summary: 'Delete an event image',
        params: z.object({
          event_id: z.coerce.number().int().positive(),
          image_id: z.coerce.number().int().positive(),
        }),
      },
    },
    async (req) => {
      const e = manageable(req.params.event_id, req.credential);
      const img = repo.deleteEventImage(e.id, req.params.image_id);
      if (!img) throw new HttpError(404, 'Image not found for this event');
      await app.storage.delete(img.storageKey);
      return { success: true, message: `Image ${img.id} deleted` };
    },
  );

  app.get(
    '/api/admin/event-categories/',
    { config: MANAGE, schema: { tags: ['events'], summary: 'Event categories' } },
    async () => ({
      categories: repo.categories(),
    }),
  );
  app.post(
    '/api/admin/event-categories/',
    {
      config: ADMIN,
      schema: {
        tags: ['events'],
        summary: 'Create an event category (admins)',
        body: z.object({ name: z.string().trim().min(1).max(100), emoji: z.string().max(16).default('') }),
      },
    },
    async (req, reply) => {
      if (repo.categories().some((c) => c.name.toLowerCase() === req.body.name.toLowerCase())) {
        throw new HttpError(409, 'Category already exists');
      }
      return reply.status(201).send(repo.createCategory(req.body.name, req.body.emoji));
    },
  );
  app.get(
    '/api/admin/discounts/',
    { config: MANAGE, schema: { tags: ['events'], summary: 'Discounts' } },
    async () => ({
      discounts: repo.discounts(),
    }),
  );
  app.post(
    '/api/admin/discounts/',
    {
      config: ADMIN,
      schema: {
        tags: ['events'],
        summary: 'Create a discount (admins)',
        body: z.object({
          name: z.string().trim().min(1).max(200),
          terms: z.string().max(2000).default(''),
          emoji: z.string().max(16).default(''),
        }),
      },
    },
    async (req, reply) =>
      reply.status(201).send(repo.createDiscount(req.body.name, req.body.terms, req.body.emoji)),
  );
};

export default eventsRoutes;
