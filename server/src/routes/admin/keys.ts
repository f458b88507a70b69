// Admin API for API keys: issue (the key is shown once), list, revoke. Admin user sessions only.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { issueKey, SOURCE_SLUG } from '../../auth/keys.js';
import type { ApiKeyRecord } from '../../db/repositories.js';
import { KEY_KINDS } from '../../db/repositories.js';
import { HttpError } from '../../errors.js';

const keyView = z.object({
  id: z.number(),
  kind: z.enum(KEY_KINDS),
  name: z.string(),
  source: z.string().nullable(),
  legacy_v1: z.boolean(),
  prefix: z.string(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

export const viewKey = (k: ApiKeyRecord): z.infer<typeof keyView> => ({
  id: k.id,
  kind: k.kind,
  name: k.name,
  source: k.source,
  legacy_v1: k.legacyV1,
  prefix: k.prefix,
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
  last_used_at: k.lastUsedAt,
});

const admin = { access: { allow: ['user' as const], admin: true }, rateClass: 'admin' as const };

const keyRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/api/admin/keys/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'List API keys',
        response: { 200: z.object({ keys: z.array(keyView) }) },
      },
    },
    async () => ({ keys: app.repos.apiKeys.list().map(viewKey) }),
  );

  app.post(
    '/api/admin/keys/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Issue an API key (shown once)',
        body: z
          .object({
            kind: z.enum(KEY_KINDS),
            name: z.string().trim().min(1).max(200),
            source: z
              .string()
              .regex(SOURCE_SLUG, 'must be 2 to 32 characters of a-z, 0-9, _ and -')
              .optional(),
            legacy_v1: z.boolean().default(false),
          })
          .refine((b) => (b.kind === 'partner') === (b.source !== undefined), {
            message: 'partner keys need a source slug, and only partner keys have one',
            path: ['source'],
          }),
        response: { 201: keyView.extend({ key: z.string() }) },
      },
    },
    async (request, reply) => {
      const { kind, name, source, legacy_v1 } = request.body;
      const { key, record } = issueKey(app.repos, {
        kind,
        name,
        source: source ?? null,
        legacyV1: legacy_v1,
      });
      return reply.status(201).send({ ...viewKey(record), key });
    },
  );

  app.delete(
    '/api/admin/keys/:id/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Revoke an API key (refused from the next request on)',
        params: z.object({ id: z.coerce.number().int().positive() }),
        response: { 200: z.object({ success: z.literal(true), key: keyView }) },
      },
    },
    async (request) => {
      const id = request.params.id;
      if (!app.repos.apiKeys.byId(id)) throw new HttpError(404, 'API key not found');
      app.repos.apiKeys.revoke(id);
      return { success: true as const, key: viewKey(app.repos.apiKeys.byId(id) as ApiKeyRecord) };
    },
  );
};

export default keyRoutes;
