// Versions and methods at the routing layer: deprecation headers and 410 for retired versions (from
// the registry in versions.ts and configuration), and 405 with `Allow` for a known path called with
// a method it does not take. Routes are collected as they are registered; `finishRoutes` adds the
// 405 and 410 answers once every route plugin is in.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import { deprecationHeaders, ENDPOINT_VERSIONS, type EndpointVersion, retiredBody } from '../versions.js';

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds the 405 and 410 routes; call after registering every route. */
    finishRoutes(): void;
  }
}

const key = (method: string, path: string) => `${method.toUpperCase()} ${normalize(path)}`;
const normalize = (path: string) => (path.endsWith('/') ? path : `${path}/`);

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

    app.addHook('onRoute', (route) => {
      // Wildcard routes (static files of the docs UI) take what they take.
      if (route.url.includes('*') || route.url.startsWith('/docs')) return;
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
      const url = request.routeOptions.url;
      if (!url) return;
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
        const missing = METHODS.filter((m) => !methods.has(m));
        if (missing.length === 0 || missing.length === METHODS.length) continue;
        const allow = [...methods]
          .filter((m) => m !== 'OPTIONS')
          .sort()
          .join(', ');
        app.route({
          method: missing,
          url,
          config: { access: { public: true } },
          schema: { hide: true },
          handler: async () => {
            throw new HttpError(405, 'Method not allowed', undefined, {}, { Allow: allow });
          },
        });
      }
    });
  },
  { name: 'versions' },
);
