// The OAuth 2.1 authorization server in Fastify: oidc-provider's endpoints (authorize, token,
// revocation, discovery) are Fastify routes that hand the raw request to the provider before the
// body is read, so they keep the platform's access rules, rate limits and 405 answers; the rider's
// sign-in and consent pages are ordinary routes around the provider's interactions.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type Provider from 'oidc-provider';
import { errors as oidcErrors } from 'oidc-provider';
import { z } from 'zod';
import { verifyPassword } from '../auth/passwords.js';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import { consentPage, errorPage, expiredPage, type Page, signInPage } from '../oauth/pages.js';
import { CONSENT_PATH, createProvider, OAUTH_MOUNT } from '../oauth/provider.js';

declare module 'fastify' {
  interface FastifyInstance {
    oauth: Provider;
  }
}

const send = (reply: FastifyReply, p: Page) => reply.status(p.status).headers(p.headers).send(p.body);

const DISCOVERY = '/.well-known/openid-configuration';

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const provider = createProvider({
      repos: app.repos,
      box: app.secretBox,
      issuer: app.tokens.getIssuer(),
      refreshTokenDays: config.refreshTokenDays,
      trustProxy: config.trustProxy,
      onStorageFull: () => {
        app.storageFull.lastAt = Date.now();
      },
      renderError(ctx, out) {
        const p = errorPage(
          ctx.status >= 400 ? ctx.status : 400,
          'This app cannot sign you in',
          out.error_description ?? out.error,
        );
        ctx.status = p.status;
        ctx.set(p.headers);
        ctx.body = p.body;
      },
    });
    provider.on('server_error', (_ctx, err) => app.log.error({ err }, 'oauth: unexpected failure'));
    app.decorate('oauth', provider);
    const callback = provider.callback();

    // A wrong or unknown client secret at the token or revocation endpoint is a failed
    // authentication like a bad API key: counted against the client IP (rate class auth_failures),
    // whose later credentials are refused with 429 by the auth plugin once past the limit.
    const handedOver = new WeakMap<IncomingMessage, FastifyRequest>();
    const clientAuthFailed = (ctx: { req: IncomingMessage }, err: Error) => {
      const request = handedOver.get(ctx.req);
      if (!request || !(err instanceof oidcErrors.InvalidClientAuth)) return;
      // Past the limit it throws 429, which this answer (already invalid_client) does not need.
      app.authFailed(request, `invalid_client: ${err.error_description ?? err.message}`).catch(() => {});
    };
    provider.on('grant.error', clientAuthFailed);
    provider.on('revocation.error', clientAuthFailed);

    /**
     * Hands a request to oidc-provider as if it were mounted at /auth/v1 (`originalUrl` keeps the
     * mount, as Express and Connect do), under the provider's own path for it.
     */
    const handOver =
      (providerPath: (path: string) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
        reply.hijack();
        const req = request.raw as IncomingMessage & { originalUrl?: string };
        const raw = req.url ?? '/';
        const q = raw.indexOf('?');
        const path = (q === -1 ? raw : raw.slice(0, q)).replace(/(.)\/$/, '$1');
        const inner = providerPath(path.startsWith(OAUTH_MOUNT) ? path.slice(OAUTH_MOUNT.length) : path);
        const query = q === -1 ? '' : raw.slice(q);
        req.originalUrl = OAUTH_MOUNT + inner + query;
        req.url = inner + query;
        handedOver.set(req, request);
        await callback(req, reply.raw);
      };
    const asIs = handOver((p) => p);
    const oauthRoute = { access: { public: true }, ownCredentials: true } as const;
    // The handler of a handed-over route is never reached: its onRequest hook has answered.
    const never = async () => undefined;

    app.get(
      `${OAUTH_MOUNT}/oauth/authorize`,
      {
        config: oauthRoute,
        schema: {
          tags: ['oauth'],
          summary: 'Authorization endpoint (opened in the rider’s browser): PKCE S256 required',
        },
        onRequest: async (request, reply) => {
          // A missing or non-S256 challenge is shown as an error page, never sent to the redirect URI.
          const q = request.query as Record<string, unknown>;
          if (typeof q.code_challenge !== 'string' || q.code_challenge === '') {
            return send(
              reply,
              errorPage(400, 'This app cannot sign you in', 'code_challenge is required (PKCE with S256).'),
            );
          }
          if (q.code_challenge_method !== 'S256') {
            return send(
              reply,
              errorPage(400, 'This app cannot sign you in', 'code_challenge_method must be S256.'),
            );
          }
          return asIs(request, reply);
        },
      },
      never,
    );
    app.get(
      `${OAUTH_MOUNT}/oauth/authorize/:uid`,
      {
        config: oauthRoute,
        schema: { tags: ['oauth'], summary: 'Resumes an authorization after sign-in and consent' },
        onRequest: asIs,
      },
      never,
    );
    app.post(
      `${OAUTH_MOUNT}/oauth/token`,
      {
        config: { ...oauthRoute, rateClass: 'auth' },
        schema: {
          tags: ['oauth'],
          summary: 'Token endpoint (form-encoded): authorization_code with code_verifier, refresh_token',
        },
        onRequest: asIs,
      },
      never,
    );
    app.post(
      `${OAUTH_MOUNT}/oauth/revoke`,
      {
        config: { ...oauthRoute, rateClass: 'auth' },
        schema: { tags: ['oauth'], summary: 'Token revocation (RFC 7009): ends the token’s grant' },
        onRequest: asIs,
      },
      never,
    );
    // Discovery: where OpenID Connect (issuer + path) and RFC 8414 look, and at the root (decisions.md).
    for (const url of [
      `${OAUTH_MOUNT}${DISCOVERY}`,
      DISCOVERY,
      '/.well-known/oauth-authorization-server',
      `/.well-known/oauth-authorization-server${OAUTH_MOUNT}`,
    ]) {
      app.get(
        url,
        {
          config: oauthRoute,
          schema: { tags: ['oauth'], summary: 'Authorization server metadata (discovery)' },
          onRequest: handOver(() => DISCOVERY),
        },
        never,
      );
    }

    await app.register(interactionPages, { provider });
  },
  { name: 'oauth', dependencies: ['storage', 'auth'] },
);

/** The rider's pages: sign-in, consent, cancel (an encapsulated scope with a form-body parser). */
async function interactionPages(app: FastifyInstance, { provider }: { provider: Provider }) {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const csrfKey = app.repos.oauth.serverSecret('oauth-csrf');
  const csrfFor = (uid: string) => createHmac('sha256', csrfKey).update(uid).digest('base64url');
  const csrfOk = (uid: string, given: unknown) => {
    if (typeof given !== 'string') return false;
    const a = Buffer.from(csrfFor(uid));
    const b = Buffer.from(given);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const page = { access: { public: true } } as const;
  const pageSchema = (summary: string) => ({ tags: ['oauth'], summary });
  type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

  /** The login request behind a page, or null (an expiry page is sent) when it is gone. */
  async function details(request: FastifyRequest, reply: FastifyReply, uid: string): Promise<Details | null> {
    try {
      const d = await provider.interactionDetails(request.raw, reply.raw);
      if (d.uid === uid) return d;
    } catch (err) {
      if (!(err instanceof oidcErrors.SessionNotFound)) throw err;
    }
    await send(reply, expiredPage());
    return null;
  }

  /** Refuses a form post without this request's CSRF token or from another origin. */
  function forged(request: FastifyRequest, uid: string): boolean {
    const origin = request.headers.origin;
    if (origin && URL.parse(origin)?.host !== request.host) return true;
    return !csrfOk(uid, (request.body as Record<string, unknown> | undefined)?.csrf);
  }
  /**
   * Sends the browser back to the authorization after a page's decision (303, as oidc-provider's
   * interactionFinished would), through Fastify, so a failed save reaches the error handler.
   */
  const finish = (reply: FastifyReply, returnTo: string) =>
    reply.status(303).header('Location', returnTo).header('Content-Length', '0').send();
  const forgedPage = () => errorPage(403, 'Request refused', 'The form was not sent from this page.');
  /** The 429 of the failed-authentication limit as a page (other errors go on as they are). */
  const sendTooMany = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof HttpError) || err.statusCode !== 429) throw err;
    const p = errorPage(
      429,
      'Too many failed sign-ins',
      'Too many failed sign-ins from this address. Wait a minute, then try again.',
    );
    return send(reply, { ...p, headers: { ...p.headers, ...err.headers } });
  };

  async function appName(clientId: unknown): Promise<string> {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    return client?.clientName ?? 'An app';
  }

  const actions = (uid: string) => ({
    signIn: `${CONSENT_PATH}/${uid}/sign-in`,
    allow: `${CONSENT_PATH}/${uid}/allow`,
    cancel: `${CONSENT_PATH}/${uid}/cancel`,
  });

  const uidParams = z.object({ uid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

  async function showStep(request: FastifyRequest, reply: FastifyReply, d: Details, error?: string) {
    const a = actions(d.uid);
    const name = await appName(d.params.client_id);
    if (d.prompt.name === 'login') {
      return send(
        reply,
        signInPage({
          action: a.signIn,
          cancelAction: a.cancel,
          appName: name,
          csrf: csrfFor(d.uid),
          error,
          email: (request.body as Record<string, string> | undefined)?.email,
          status: error ? 401 : 200,
        }),
      );
    }
    const accountId = d.session?.accountId;
    const user = accountId ? app.repos.users.byIdentity(accountId) : undefined;
    if (d.prompt.name !== 'consent' || !user) {
      return send(
        reply,
        errorPage(400, 'This app cannot sign you in', 'The sign-in request cannot continue.'),
      );
    }
    const scopes = String(d.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    return send(
      reply,
      consentPage({
        action: a.allow,
        cancelAction: a.cancel,
        appName: name,
        email: user.email,
        scopes,
        csrf: csrfFor(d.uid),
      }),
    );
  }

  app.get<{ Params: { uid: string } }>(
    `${CONSENT_PATH}/:uid`,
    {
      config: page,
      schema: { ...pageSchema('Sign-in or consent page of a login request'), params: uidParams },
    },
    async (request, reply) => {
      const d = await details(request, reply, request.params.uid);
      if (!d) return reply;
      return showStep(request, reply, d);
    },
  );

  app.post<{ Params: { uid: string }; Body: Record<string, string> }>(
    `${CONSENT_PATH}/:uid/sign-in`,
    {
      config: { ...page, rateClass: 'auth' },
      schema: { ...pageSchema('Sign-in form of a login request'), params: uidParams },
    },
    async (request, reply) => {
      const { uid } = request.params;
      if (forged(request, uid)) return send(reply, forgedPage());
      const d = await details(request, reply, uid);
      if (!d) return reply;
      if (d.prompt.name !== 'login') return showStep(request, reply, d);
      const email = typeof request.body?.email === 'string' ? request.body.email.trim() : '';
      const password = typeof request.body?.password === 'string' ? request.body.password : '';
      // Wrong passwords count as failed authentications, as with the API's password grant; past
      // the limit the address is refused before the password is tried.
      try {
        await app.authAllowed(request);
      } catch (err) {
        return sendTooMany(reply, err);
      }
      const user = email ? app.repos.users.byEmail(email) : undefined;
      const ok = await verifyPassword(password, user ? app.repos.users.passwordHash(user.id) : null);
      if (!user || !ok) {
        try {
          await app.authFailed(request, 'Invalid login credentials');
        } catch (err) {
          return sendTooMany(reply, err);
        }
        return showStep(request, reply, d, 'The email or password is not right.');
      }
      return finish(
        reply,
        await provider.interactionResult(
          request.raw,
          reply.raw,
          { login: { accountId: user.identityUserId } },
          { mergeWithLastSubmission: false },
        ),
      );
    },
  );

  app.post<{ Params: { uid: string }; Body: Record<string, string> }>(
    `${CONSENT_PATH}/:uid/allow`,
    { config: page, schema: { ...pageSchema('Consent: allow the app'), params: uidParams } },
    async (request, reply) => {
      const { uid } = request.params;
      if (forged(request, uid)) return send(reply, forgedPage());
      const d = await details(request, reply, uid);
      if (!d) return reply;
      const accountId = d.session?.accountId;
      if (d.prompt.name !== 'consent' || !accountId) return showStep(request, reply, d);
      const grant = new provider.Grant({ accountId, clientId: String(d.params.client_id) });
      const missing = d.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      return finish(
        reply,
        await provider.interactionResult(
          request.raw,
          reply.raw,
          { consent: { grantId } },
          { mergeWithLastSubmission: true },
        ),
      );
    },
  );

  app.post<{ Params: { uid: string }; Body: Record<string, string> }>(
    `${CONSENT_PATH}/:uid/cancel`,
    {
      config: page,
      schema: { ...pageSchema('Cancel: the app gets error=access_denied'), params: uidParams },
    },
    async (request, reply) => {
      const { uid } = request.params;
      if (forged(request, uid)) return send(reply, forgedPage());
      const d = await details(request, reply, uid);
      if (!d) return reply;
      return finish(
        reply,
        await provider.interactionResult(
          request.raw,
          reply.raw,
          { error: 'access_denied', error_description: 'The rider cancelled signing in to the app' },
          { mergeWithLastSubmission: false },
        ),
      );
    },
  );
}
