// The server as identity provider for riders (decisions.md "Credentials"): sign-up, password
// sign-in, refresh-token rotation, sign-out, the signed-in user, and the public signing keys.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { publicUser } from '../../auth/sessions.js';
import { HttpError } from '../../errors.js';

const sessionTokens = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number(),
  expires_at: z.number(),
  refresh_token: z.string(),
  user: z.object({
    identity_user_id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(['user', 'admin']),
  }),
});

const email = z.email().max(254);
const password = z.string().min(8, 'must be at least 8 characters').max(256);

const authRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/auth/v1/signup',
    {
      config: { access: { public: true }, rateClass: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Create a rider account and sign in',
        body: z.object({ email, password, name: z.string().trim().min(1).max(200) }),
        response: { 201: sessionTokens },
      },
    },
    async (request, reply) => {
      const { email, password, name } = request.body;
      return reply.status(201).send(await app.sessions.signUp(email, password, name));
    },
  );

  app.post(
    '/auth/v1/token',
    {
      config: { access: { public: true }, rateClass: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with a password, or exchange a refresh token (rotated: each works once)',
        querystring: z.object({ grant_type: z.enum(['password', 'refresh_token']) }),
        body: z.object({
          email: z.string().optional(),
          password: z.string().optional(),
          refresh_token: z.string().optional(),
        }),
        response: { 200: sessionTokens },
      },
    },
    async (request) => {
      const b = request.body;
      if (request.query.grant_type === 'password') {
        if (!b.email) throw new HttpError(400, 'email: required');
        if (!b.password) throw new HttpError(400, 'password: required');
        await app.authAllowed(request);
        try {
          return await app.sessions.signIn(b.email, b.password);
        } catch (err) {
          if (err instanceof HttpError && err.statusCode === 400) await app.authFailed(request, err.message);
          throw err;
        }
      }
      if (!b.refresh_token) throw new HttpError(400, 'refresh_token: required');
      return app.sessions.refresh(b.refresh_token);
    },
  );

  app.post(
    '/auth/v1/logout',
    {
      config: { access: { allow: ['user'], oauth: 'reject' } },
      schema: { tags: ['auth'], summary: 'Sign out: ends the session and every token of it' },
    },
    async (request, reply) => {
      const c = request.credential;
      if (c.type === 'user' && c.sessionId) app.sessions.signOut(c.sessionId);
      return reply.status(204).send();
    },
  );

  app.get(
    '/auth/v1/user',
    {
      config: { access: { allow: ['user'], oauth: 'reject' }, rateClass: 'profile' },
      schema: {
        tags: ['auth'],
        summary: 'The signed-in rider',
        response: { 200: sessionTokens.shape.user },
      },
    },
    async (request) => {
      const c = request.credential;
      if (c.type !== 'user') throw new HttpError(401, 'Endpoint requires one of: user');
      return publicUser(c.user);
    },
  );

  app.get(
    '/auth/v1/.well-known/jwks.json',
    {
      config: { access: { public: true } },
      schema: { tags: ['auth'], summary: 'Public keys that sign access and ID tokens (JWKS)' },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      return app.tokens.jwks();
    },
  );
};

export default authRoutes;
