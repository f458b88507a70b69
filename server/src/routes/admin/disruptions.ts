// Admin API for disruptions (interface spec "Disruption"): curated entries (create, update, end),
// the list, and the WZDx importer's state with a run-now. Active `closed`/`avoid` entries are
// avoidance windows on their ways (given, or matched near the pin); upcoming ones change no route.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Disruption, NewDisruption } from '../../db/repositories.js';
import { HttpError } from '../../errors.js';
import { nearbyWays, ReportAnalyser } from '../../reports/analysis.js';
import { localMinutesOf, nowLocal, todayLocal } from '../../reports/changes.js';
import { lonLat } from '../directions/v2.js';
import { actorOf, admin } from './reports.js';

const date = z.iso.date();
const body = z
  .object({
    name: z.string().max(200).default(''),
    notes: z.string().max(2000).default(''),
    severity: z.enum(['avoid', 'closed']),
    location: lonLat,
    start_date: date,
    start_minute: z.number().int().min(0).max(1439),
    end_date: date,
    end_minute: z.number().int().min(0).max(1440),
    /** OSM ways it covers; by default the way nearest the pin (within 40 m). */
    way_ids: z.array(z.number().int().positive()).max(500).optional(),
  })
  .refine(
    (b) =>
      `${b.start_date}/${String(b.start_minute).padStart(4, '0')}` <
      `${b.end_date}/${String(b.end_minute).padStart(4, '0')}`,
    {
      message: 'must end after it starts',
      path: ['end_date'],
    },
  );

const viewOf = (d: Disruption) => ({
  id: d.id,
  source: d.source,
  city: d.city,
  name: d.name,
  notes: d.notes,
  severity: d.severity,
  location: d.location,
  start_date: d.startDate,
  start_minute: d.startMinute,
  end_date: d.endDate,
  end_minute: d.endMinute,
  way_ids: d.wayIds,
  external_id: d.externalId,
});

/** `curator:12` or `12` → 12. */
const idParam = z.object({
  id: z.string().transform((v, ctx) => {
    const m = /^(?:[a-z0-9_-]+:)?(\d{1,15})$/.exec(v);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: 'must be a disruption id like curator:12' });
      return z.NEVER;
    }
    return Number(m[1]);
  }),
});

const adminDisruptionRoutes: FastifyPluginAsyncZod = async (app) => {
  /** The entry as the spec shows it, plus its ways, feed id and state now (`active`, `upcoming`, `ended`). */
  const view = (d: Disruption) => {
    const now = nowLocal(app.engine.timezone(d.city));
    const start = localMinutesOf(`${d.startDate}T00:00`) + d.startMinute;
    const end = localMinutesOf(`${d.endDate}T00:00`) + d.endMinute;
    return {
      ...viewOf(d),
      status: now >= end || end <= start ? 'ended' : now >= start ? 'active' : 'upcoming',
    };
  };

  const analyser = new ReportAnalyser(app.engine, app.repos);
  const cityAt = (p: [number, number]) => {
    const c = analyser.cityOf(p);
    if (c) return c;
    throw app.engine.loadingErrorAt([p]) ?? new HttpError(400, 'location lies outside every routed city');
  };
  const entry = async (b: z.infer<typeof body>): Promise<NewDisruption> => {
    const city = cityAt(b.location);
    const wayIds = b.way_ids ?? (await nearbyWays(city, b.location, 40)).slice(0, 1).map((w) => w.way_id);
    return {
      source: 'curator',
      city: city.id,
      name: b.name,
      notes: b.notes,
      severity: b.severity,
      location: b.location,
      startDate: b.start_date,
      startMinute: b.start_minute,
      endDate: b.end_date,
      endMinute: b.end_minute,
      wayIds,
    };
  };
  const existing = (n: number) => {
    const d = app.repos.disruptions.byNumber(n);
    if (!d) throw new HttpError(404, 'Disruption not found');
    return d;
  };
  const log = (actor: string, action: string, n: number, before: unknown, after: unknown) =>
    app.repos.reports.log({ reportId: null, changeId: null, disruptionId: n, actor, action, before, after });

  app.get(
    '/api/admin/disruptions/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Disruptions that have not ended (newest first)',
        querystring: z.object({ city: z.string().optional() }),
      },
    },
    async (request) => {
      const city = request.query.city;
      return {
        disruptions: app.repos.disruptions
          .list(city, todayLocal(city ? app.engine.timezone(city) : 'UTC', -1))
          .map(view),
        wzdx: app.wzdx ? app.wzdx.last : null,
      };
    },
  );

  app.post(
    '/api/admin/disruptions/',
    { config: admin, schema: { tags: ['admin'], summary: 'Add a curated disruption', body } },
    async (request, reply) => {
      const d = app.repos.disruptions.create(await entry(request.body));
      app.roadChanges.syncDisruptions(d.city);
      log(actorOf(request.credential), 'create_disruption', Number(d.id.split(':')[1]), null, view(d));
      return reply.status(201).send(view(d));
    },
  );

  app.put(
    '/api/admin/disruptions/:id/',
    { config: admin, schema: { tags: ['admin'], summary: 'Update a disruption', params: idParam, body } },
    async (request) => {
      const n = request.params.id;
      const before = existing(n);
      const d = app.repos.disruptions.update(n, {
        ...(await entry(request.body)),
        externalId: before.externalId,
      });
      if (!d) throw new HttpError(404, 'Disruption not found');
      app.roadChanges.syncDisruptions(before.city);
      app.roadChanges.syncDisruptions(d.city);
      log(actorOf(request.credential), 'update_disruption', n, view(before), view(d));
      return view(d);
    },
  );

  app.post(
    '/api/admin/disruptions/:id/end/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'End a disruption now (it stops changing routing)',
        params: idParam,
      },
    },
    async (request) => {
      const n = request.params.id;
      const before = existing(n);
      const d = app.roadChanges.endDisruption(n, app.engine.timezone(before.city)) as Disruption;
      log(actorOf(request.credential), 'end_disruption', n, view(before), view(d));
      return view(d);
    },
  );

  app.post(
    '/api/admin/disruptions/import/',
    {
      config: admin,
      schema: { tags: ['admin'], summary: 'Run the WZDx import now' },
    },
    async () => {
      if (!app.wzdx) throw new HttpError(409, 'No WZDx feed is configured (QUIETWAY_WZDX_URL)');
      const ok = await app.wzdx.run();
      return { ok, ...app.wzdx.last };
    },
  );
};

export default adminDisruptionRoutes;
