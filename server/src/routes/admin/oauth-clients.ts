// Admin API for third-party apps (OAuth clients): register (a confidential app's secret is shown
// once), list, change name or redirect URIs, issue a new secret, revoke. Admin user sessions only.
// Every change applies to the next authorize or token request; a new secret or a revocation ends
// the app's refresh tokens at once.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { OAuthClientRecord } from '../../db/oauth.js';
import { HttpError } from '../../errors.js';
import {
  CLIENT_TYPES,
  ClientRegistrationError,
  registerClient,
  rotateClientSecret,
  updateClient,
} from '../../oauth/clients.js';

const clientView = z.object({
  client_id: z.string(),
  name: z.string(),
  type: z.enum(CLIENT_TYPES),
  redirect_uris: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  secret_rotated_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

export const viewClient = (c: OAuthClientRecord): z.infer<typeof clientView> => ({
  client_id: c.clientId,
  name: c.name,
  type: c.type,
  redirect_uris: c.redirectUris,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  secret_rotated_at: c.secretRotatedAt,
  revoked_at: c.revokedAt,
});

const admin = { access: { allow: ['user' as const], admin: true }, rateClass: 'admin' as const };
const params = z.object({ client_id: z.string().min(1).max(100) });

/** Registration rule failures are 400s naming the field. */
function registration<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ClientRegistrationError) throw new HttpError(400, err.message);
    throw err;
  }
}

const oauthClientRoutes: FastifyPluginAsyncZod = async (app) => {
  const repo = app.repos.oauth;
  const found = (clientId: string) => {
    const c = repo.client(clientId);
    if (!c) throw new HttpError(404, 'OAuth client not found');
    return c;
  };

  app.get(
    '/api/admin/oauth-clients/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'List third-party apps (OAuth clients)',
        response: { 200: z.object({ clients: z.array(clientView) }) },
      },
    },
    async () => ({ clients: repo.listClients().map(viewClient) }),
  );

  app.post(
    '/api/admin/oauth-clients/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Register a third-party app (a confidential app’s secret is shown once)',
        body: z.object({
          name: z.string().trim().min(1).max(200),
          type: z.enum(CLIENT_TYPES),
          redirect_uris: z.array(z.string()).min(1),
        }),
        response: { 201: clientView.extend({ client_secret: z.string().nullable() }) },
      },
    },
    async (request, reply) => {
      const { name, type, redirect_uris } = request.body;
      const { client, secret } = registration(() =>
        registerClient(repo, { name, type, redirectUris: redirect_uris }),
      );
      return reply.status(201).send({ ...viewClient(client), client_secret: secret });
    },
  );

  app.patch(
    '/api/admin/oauth-clients/:client_id/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Change an app’s name or redirect URIs (applies to the next authorize request)',
        params,
        body: z
          .object({
            name: z.string().trim().min(1).max(200).optional(),
            redirect_uris: z.array(z.string()).min(1).optional(),
          })
          .refine((b) => b.name !== undefined || b.redirect_uris !== undefined, {
            message: 'give name or redirect_uris',
          }),
        response: { 200: clientView },
      },
    },
    async (request) => {
      found(request.params.client_id);
      const c = registration(() =>
        updateClient(repo, request.params.client_id, {
          name: request.body.name,
          redirectUris: request.body.redirect_uris,
        }),
      );
      return viewClient(c as OAuthClientRecord);
    },
  );

  app.post(
    '/api/admin/oauth-clients/:client_id/secret/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Issue a new client secret (shown once); the app’s refresh tokens stop at once',
        params,
        response: { 200: clientView.extend({ client_secret: z.string() }) },
      },
    },
    async (request) => {
      found(request.params.client_id);
      const r = registration(() => rotateClientSecret(repo, request.params.client_id));
      if (!r) throw new HttpError(404, 'OAuth client not found');
      return { ...viewClient(r.client), client_secret: r.secret };
    },
  );

  app.delete(
    '/api/admin/oauth-clients/:client_id/',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Revoke an app: its authorize and token requests are refused, its refresh tokens stop',
        params,
        response: { 200: z.object({ success: z.literal(true), client: clientView }) },
      },
    },
    async (request) => {
      found(request.params.client_id);
      repo.revokeClient(request.params.client_id);
      return { success: true as const, client: viewClient(found(request.params.client_id)) };
    },
  );
};

export default oauthClientRoutes;
