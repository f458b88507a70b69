// Versions and methods at the routing layer: deprecation headers and 410 for retired versions (from
// the registry in versions.ts and configuration), and 405 with `Allow` for a known path called with
// a method it does not take. Routes are collected as they are registered; `finishRoutes` adds the
// 405 and 410 answers once every route plugin is in.
//
// 405 covers every method Node's HTTP parser hands over (all of `http.METHODS` but CONNECT, which
// Node keeps for tunnels): those Fastify does not route by itself (PROPFIND, PURGE, M-SEARCH…) are
// added with `addHttpMethod`, so that a 405 route can be declared for them. The answer is given in
// this plugin's `onRequest` hook, which runs before the auth plugin's and before any body is read:
// a wrong method is refused the same way with a valid, an invalid or no credential, and a QUERY
// without a Content-Type is not refused as a malformed request first. Unknown paths are answered 404
// there too, whatever the method.
import { METHODS as NODE_METHODS } from 'node:http';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { HttpError, UNKNOWN_ENDPOINT } from '../errors.js';
import { deprecationHeaders, ENDPOINT_VERSIONS, type EndpointVersion, retiredBody } from '../versions.js';

/** Every method a request can reach the router with (CONNECT never does: Node answers it itself). */
export const ROUTABLE_METHODS: readonly string[] = NODE_METHODS.filter((m) => m !== 'CONNECT');

export const METHOD_NOT_ALLOWED = 'Method not allowed';

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds the 405 and 410 routes; call after registering every route. */
    finishRoutes(): void;
  }
  interface FastifyContextConfig {
    /** A 405 route: the `Allow` header of its answer (the methods its path takes). */
    allow?: string;
  }
}

const key = (method: string, path: string) => `${method.toUpperCase()} ${normalize(path)}`;
// Paths are kept with their trailing slash (the router ignores it); a wildcard ends where it is.
const normalize = (path: string) => (path.endsWith('/') || path.endsWith('*') ? path : `${path}/`);

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const routes = new Map<string, Set<string>>();
    const versions = new Map<string, EndpointVersion>(
      ENDPOINT_VERSIONS.map((v) => [key(v.method, v.path), v]),
    );
    const retired = new Set(
      config.retiredEndpoints.map((e) => {
        const [method, path] = e.split(' ');
        return key(method ?? '', path ?? '');
      }),
    );

    // Methods Node's parser accepts but Fastify does not route by default (none of them has a body
    // Fastify would read: their only routes here are 405 answers and the place-search catch-all).
    const supported = new Set(app.supportedMethods);
    for (const m of ROUTABLE_METHODS) if (!supported.has(m)) app.addHttpMethod(m);

    app.addHook('onRoute', (route) => {
      // The 405 answers themselves (added by finishRoutes) are not methods the path takes.
      if (route.config?.allow !== undefined) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const url = normalize(route.url);
      let set = routes.get(url);
      if (!set) {
        set = new Set();
        routes.set(url, set);
      }
      for (const m of methods) set.add(m.toUpperCase());
    });

    app.addHook('onRequest', async (request, reply) => {
      const route = request.routeOptions;
      const url = route.url;
      // An unknown path: 404 straight away, its body unread (a QUERY without a Content-Type would
      // otherwise be refused as malformed first). The errors plugin's not-found handler answers alike.
      if (!url) throw new HttpError(404, UNKNOWN_ENDPOINT);
      // A method the path does not take: answered before credentials are looked at or a body read.
      const allow = route.config.allow;
      if (allow !== undefined) throw new HttpError(405, METHOD_NOT_ALLOWED, undefined, {}, { Allow: allow });
      const k = key(request.method, url);
      const v = versions.get(k);
      if (retired.has(k)) {
        const body = retiredBody(normalize(url), v?.successor);
        throw new HttpError(410, body.error, body.details);
      }
      if (v?.status === 'deprecated') reply.headers(deprecationHeaders(v, config.v1Sunset));
    });

    app.decorate('finishRoutes', () => {
      // Retired endpoints whose code is gone still answer 410 rather than 404.
      for (const r of retired) {
        const [method = '', path = ''] = r.split(' ');
        if (!routes.get(path)?.has(method)) {
          app.route({
            method: method as HTTPMethods,
            url: path,
            config: { access: { public: true } },
            schema: { hide: true },
            handler: async () => {
              const v = versions.get(r);
              const body = retiredBody(path, v?.successor);
              throw new HttpError(410, body.error, body.details);
            },
          });
        }
      }
      for (const [url, methods] of [...routes]) {
        const missing = ROUTABLE_METHODS.filter((m) => !methods.has(m));
        if (missing.length === 0) continue;
        const allow = [...methods].sort().join(', ');
        app.route({
          method: missing as HTTPMethods[],
          url,
          // HEAD is in `missing` whenever GET is: no HEAD route of Fastify's own beside it.
          exposeHeadRoute: false,
          config: { access: { public: true }, allow },
          schema: { hide: true },
          // Never reached: the onRequest hook above answers first.
          handler: async () => {
            throw new HttpError(405, METHOD_NOT_ALLOWED, undefined, {}, { Allow: allow });
          },
        });
      }
    });
  },
  { name: 'versions' },
);
