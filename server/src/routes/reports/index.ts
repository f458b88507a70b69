// POST /reports/ and GET /reports/{id}/ (interface spec "Reports"): riders (user sessions and OAuth
// apps acting for them) and partner keys file road reports; each sees only what it may. A report is
// committed before the answer, then the analysis worker picks it up (never on the request path).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Credential } from '../../auth/access.js';
import { SOURCE_SLUG } from '../../auth/keys.js';
import type { ReportRecord } from '../../db/reports.js';
import { HttpError } from '../../errors.js';
import { ISSUE_TYPES } from '../../reports/analysis.js';
import { lonLat } from '../directions/v2.js';

const position = z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)]);

const body = z.object({
  issue_type: z.enum(ISSUE_TYPES, { error: `issue_type must be one of ${ISSUE_TYPES.join(', ')}` }),
  location: lonLat,
  description: z.string().max(2000, 'at most 2,000 characters').default(''),
  road_name: z.string().max(200, 'at most 200 characters').default(''),
  issue_subtype: z.string().min(1).max(64, 'at most 64 characters').optional(),
  source: z.string().optional(),
  /** The route the rider saw (directions v2 `route.geometry`), for bad_routing and unclear_instructions. */
  route: z
    .object({ type: z.literal('LineString'), coordinates: z.array(position).min(2).max(10_000) })
    .optional(),
});

export const reportView = z.object({
  id: z.number(),
  status: z.enum(['received', 'in_review', 'accepted', 'closed']),
  summary: z.string().nullable(),
  issue_type: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const viewReport = (r: ReportRecord): z.infer<typeof reportView> => ({
  id: r.id,
  status: r.status,
  summary: r.summary,
  issue_type: r.issueType,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** A rider's own reports; a partner key, the reports filed through the API. */
function mayRead(c: Credential, r: ReportRecord): boolean {
  if (c.type === 'user' || c.type === 'oauth') return r.userId === c.user.id;
  if (c.type === 'key' && c.key.kind === 'partner') return r.via === 'partner';
  return false;
}

const access = { allow: ['user' as const, 'partner' as const], oauth: 'accept' as const };

const reportRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/reports/',
    {
      config: { access, rateClass: 'report_submit' },
      schema: {
        tags: ['reports'],
        summary: 'File a road report',
        body,
        response: {
          201: z.object({ id: z.number(), status: z.literal('received'), created_at: z.string() }),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const c = request.credential;
      let attribution: {
        userId: number | null;
        apiKeyId: number | null;
        source: string | null;
        via: 'user' | 'partner';
      };
      if (c.type === 'key') {
        if (b.source === undefined) throw new HttpError(400, 'source is required for partner API keys');
        if (!SOURCE_SLUG.test(b.source)) {
          throw new HttpError(400, 'source must be 2 to 32 characters of a-z, 0-9, _ and -');
        }
        if (c.key.source && c.key.source !== b.source) {
          throw new HttpError(400, "source does not match this partner key's source slug");
        }
        attribution = { userId: null, apiKeyId: c.key.id, source: b.source, via: 'partner' };
      } else if (c.type === 'user' || c.type === 'oauth') {
        attribution = { userId: c.user.id, apiKeyId: null, source: null, via: 'user' };
      } else {
        throw new HttpError(401, 'Authentication credentials were not provided.');
      }
      // Synchronous insert: committed (WAL) before the answer, so an acknowledged report survives a crash.
      const r = app.repos.reports.create({
        issueType: b.issue_type,
        issueSubtype: b.issue_subtype ?? null,
        description: b.description,
        roadName: b.road_name,
        location: b.location,
        seenRoute: b.route ?? null,
        ...attribution,
      });
      app.reportWorker.kick();
      return reply.status(201).send({ id: r.id, status: 'received' as const, created_at: r.createdAt });
    },
  );

  app.get(
    '/reports/:id/',
    {
      config: { access, rateClass: 'report_read' },
      schema: {
        tags: ['reports'],
        summary: 'A report you filed: its status and the one-line outcome',
        params: z.object({ id: z.string() }),
        response: { 200: reportView },
      },
    },
    async (request) => {
      const id = /^\d{1,15}$/.test(request.params.id) ? Number(request.params.id) : Number.NaN;
      const r = Number.isSafeInteger(id) ? app.repos.reports.byId(id) : undefined;
      if (!r || !mayRead(request.credential, r)) throw new HttpError(404, 'Report not found');
      return viewReport(r);
    },
  );
};

export default reportRoutes;
