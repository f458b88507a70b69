// Admin API for human review of road reports and for the road changes in routing: the queue with
// filters, one report with its matched ways, proposed change and history, its surroundings drawn
// from the graph, accept (with the proposed change or an edited one) or close with a reason, and
// the changes in force (list, add, lift). Every decision is written to the review log.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Credential } from '../../auth/access.js';
import { REPORT_STATUSES, type ReportRecord, type RoadChangeRecord } from '../../db/reports.js';
import { HttpError } from '../../errors.js';
import { describeChange, ISSUE_TYPES, type MatchedWay, ReportAnalyser } from '../../reports/analysis.js';
import { type ChangeSpec, changeSchema } from '../../reports/changes.js';
import { roadFeatures } from '../../reports/safety-map.js';
import { lonLat } from '../directions/v2.js';
import { viewReport } from '../reports/index.js';

export const admin = { access: { allow: ['user' as const], admin: true }, rateClass: 'admin' as const };

export const actorOf = (c: Credential) => (c.type === 'user' ? c.user.email : 'unknown');

const CLOSE_REASONS = {
  already_fixed: 'already fixed',
  not_reproducible: 'not reproducible',
  outside_city: 'outside every routed city',
  duplicate: 'duplicate of another report',
  no_change: 'no routing change needed',
} as const;

const idParam = z.object({ id: z.coerce.number().int().positive() });

export const viewChange = (c: RoadChangeRecord) => ({
  id: c.id,
  city: c.city,
  kind: c.kind,
  change: c.spec,
  description: describeChange(c.spec as ChangeSpec),
  report_id: c.reportId,
  disruption_id: c.disruptionId === null ? null : `curator:${c.disruptionId}`,
  status: c.status,
  flag: c.flag,
  created_by: c.createdBy,
  created_at: c.createdAt,
  lifted_by: c.liftedBy,
  lifted_at: c.liftedAt,
});

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const adminReportRoutes: FastifyPluginAsyncZod = async (app) => {
  const analyser = new ReportAnalyser(app.engine, app.repos);
  const reportOr404 = (id: number): ReportRecord => {
    const r = app.repos.reports.byId(id);
    if (!r) throw new HttpError(404, 'Report not found');
    return r;
  };
  const detail = (r: ReportRecord) => ({
    ...viewReport(r),
    issue_subtype: r.issueSubtype,
    description: r.description,
    road_name: r.roadName,
    location: r.location,
    city: r.city,
    attribution:
      r.via === 'user'
        ? {
            via: 'user' as const,
            user: r.userId === null ? null : (app.repos.users.byId(r.userId)?.email ?? null),
          }
        : { via: 'partner' as const, source: r.source },
    route: r.seenRoute,
    reading: (r.analysis?.reading as string | undefined) ?? null,
    matched_ways: (r.analysis?.matched_ways as MatchedWay[] | undefined) ?? [],
    analysis: r.analysis,
    proposal: r.proposal,
    proposal_description: r.proposal ? describeChange(r.proposal as ChangeSpec) : null,
    duplicate_of: r.duplicateOf,
    changes: app.repos.reports
      .changes({})
      .filter((c) => c.reportId === r.id)
      .map(viewChange),
    history: app.repos.reports.history(r.id),
  });

  app.get(
    '/api/admin/reports/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'The review queue (oldest first), filtered by status, city and issue type',
        querystring: z.object({
          status: z.enum(REPORT_STATUSES).optional(),
          city: z.string().optional(),
          issue_type: z.enum(ISSUE_TYPES).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(50),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (request) => {
      const q = request.query;
      const { reports, total } = app.repos.reports.queue({
        status: q.status,
        city: q.city,
        issueType: q.issue_type,
        limit: q.limit,
        offset: q.offset,
      });
      return {
        total,
        reports: reports.map((r) => ({
          ...viewReport(r),
          issue_subtype: r.issueSubtype,
          city: r.city,
          location: r.location,
          road_name: r.roadName,
          proposal: r.proposal,
        })),
      };
    },
  );

  app.get(
    '/api/admin/reports/:id/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'One report: matched ways, proposed change, history',
        params: idParam,
      },
    },
    async (request) => detail(reportOr404(request.params.id)),
  );

  app.get(
    '/api/admin/reports/:id/surroundings/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'The roads around a report, from the graph (GeoJSON with safety classes)',
        params: idParam,
        querystring: z.object({ radius: z.coerce.number().min(50).max(1000).default(250) }),
      },
    },
    async (request) => {
      const r = reportOr404(request.params.id);
      const city = r.city ? app.engine.city(r.city) : analyser.cityOf(r.location);
      if (!city) {
        // Its city's graph may still be loading (the server has just started): said, not an empty map.
        const loading = r.city ? app.engine.loadingError(r.city) : app.engine.loadingErrorAt([r.location]);
        if (loading) throw loading;
        return { type: 'FeatureCollection', features: [] };
      }
      const [lon, lat] = r.location;
      const dLat = request.query.radius / 111_320;
      const dLon = dLat / Math.cos((lat * Math.PI) / 180);
      const { features } = await roadFeatures(
        city,
        app.repos,
        [lon - dLon, lat - dLat, lon + dLon, lat + dLat],
        5000,
      );
      return { type: 'FeatureCollection', features };
    },
  );

  app.post(
    '/api/admin/reports/:id/accept/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Accept a report: apply the proposed (or an edited) change to routing now',
        params: idParam,
        body: z
          .object({ change: changeSchema.optional(), summary: z.string().min(1).max(300).optional() })
          .default({}),
      },
    },
    async (request) => {
      const r = reportOr404(request.params.id);
      if (r.status === 'accepted' || r.status === 'closed') {
        throw new HttpError(409, `The report is already ${r.status}`);
      }
      const parsed =
        request.body.change ?? (r.proposal ? changeSchema.safeParse(r.proposal).data : undefined);
      if (!parsed)
        throw new HttpError(400, 'This report has no proposed change: send one in `change`, or close it');
      const city = r.city ?? analyser.cityOf(r.location)?.id;
      if (!city) throw new HttpError(400, 'The report lies outside every routed city: close it instead');
      const way = ((r.analysis?.matched_ways as MatchedWay[] | undefined) ?? []).find(
        (w) => 'way_ids' in parsed && parsed.way_ids.includes(w.way_id),
      );
      const actor = actorOf(request.credential);
      const change = app.roadChanges.create(city, parsed, actor, {
        reportId: r.id,
        name: way?.name || r.roadName,
        notes: `Rider report #${r.id}`,
        location: way?.nearest ?? r.location,
      });
      const summary = request.body.summary ?? `Accepted: ${describeChange(parsed, way?.name || undefined)}`;
      app.repos.reports.decide(r.id, 'accepted', capitalise(summary));
      app.repos.reports.log({
        reportId: r.id,
        changeId: change.id,
        disruptionId: change.disruptionId,
        actor,
        action: 'accept',
        before: { status: r.status, summary: r.summary, proposal: r.proposal },
        after: { status: 'accepted', summary, change: parsed },
      });
      return { report: detail(reportOr404(r.id)), change: viewChange(change) };
    },
  );

  app.post(
    '/api/admin/reports/:id/close/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Close a report without a routing change, with the reason',
        params: idParam,
        body: z.object({
          reason: z.enum(Object.keys(CLOSE_REASONS) as [keyof typeof CLOSE_REASONS]),
          summary: z.string().min(1).max(300).optional(),
        }),
      },
    },
    async (request) => {
      const r = reportOr404(request.params.id);
      if (r.status === 'accepted' || r.status === 'closed') {
        throw new HttpError(409, `The report is already ${r.status}`);
      }
      const summary = request.body.summary ?? `Closed: ${CLOSE_REASONS[request.body.reason]}`;
      app.repos.reports.decide(r.id, 'closed', summary);
      app.repos.reports.log({
        reportId: r.id,
        changeId: null,
        disruptionId: null,
        actor: actorOf(request.credential),
        action: 'close',
        before: { status: r.status, summary: r.summary },
        after: { status: 'closed', summary, reason: request.body.reason },
      });
      return { report: detail(reportOr404(r.id)) };
    },
  );

  app.get(
    '/api/admin/changes/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Road changes (active and lifted); flagged ones need review',
        querystring: z.object({
          city: z.string().optional(),
          status: z.enum(['active', 'lifted']).optional(),
        }),
      },
    },
    async (request) => ({ changes: app.repos.reports.changes(request.query).map(viewChange) }),
  );

  app.post(
    '/api/admin/changes/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Apply a road change directly (not from a report)',
        body: z.object({
          city: z.string().min(1),
          change: changeSchema,
          /** The pin of the disruption a one-off window makes (required for those). */
          location: lonLat.optional(),
        }),
      },
    },
    async (request, reply) => {
      const actor = actorOf(request.credential);
      const { city, change, location } = request.body;
      if (change.kind === 'window' && change.schedule.kind === 'once' && !location) {
        throw new HttpError(
          400,
          'location is required for a one-off window: it is the pin of its disruption',
        );
      }
      const c = app.roadChanges.create(city, change, actor, {
        location,
      });
      app.repos.reports.log({
        reportId: null,
        changeId: c.id,
        disruptionId: c.disruptionId,
        actor,
        action: 'create_change',
        before: null,
        after: c.spec,
      });
      return reply.status(201).send(viewChange(c));
    },
  );

  app.delete(
    '/api/admin/changes/:id/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Lift a road change: routing returns to the graph’s own data',
        params: idParam,
      },
    },
    async (request) => {
      const actor = actorOf(request.credential);
      const before = app.repos.reports.change(request.params.id);
      const c = app.roadChanges.lift(request.params.id, actor);
      app.repos.reports.log({
        reportId: c.reportId,
        changeId: c.id,
        disruptionId: c.disruptionId,
        actor,
        action: 'lift',
        before: before ? { status: before.status } : null,
        after: { status: c.status },
      });
      return viewChange(c);
    },
  );
};

export default adminReportRoutes;
