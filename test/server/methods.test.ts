// 405 with `Allow` for a method a known path does not take, over real HTTP (TRACE, QUERY and the
// methods only Node's parser knows, such as PROPFIND and M-SEARCH, as a client sends them): before
// credentials are looked at (no 401, whatever the key) and before a body is read (no 400); unknown
// paths stay 404 whatever the method; declared methods are unaffected.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { testConfig } from '../helpers.js';

let app: FastifyInstance;
let port = 0;
let appKey = '';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection, as a client would send it (any method Node can write). */
function call(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function expect405(res: Answer, allow: string, what: string) {
  expect(res.status, `${what}: ${res.body}`).toBe(405);
  expect(res.headers.allow, what).toBe(allow);
  expect(JSON.parse(res.body), what).toEqual({ error: 'Method not allowed' });
}

beforeAll(async () => {
  app = await buildApp({ config: testConfig() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  appKey = issueKey(app.repos, { kind: 'app', name: 'methods', source: null, legacyV1: false }).key;
});
afterAll(() => app.close());

// Public, key-only, admin and OAuth paths, with and without parameters, and a wildcard.
const SAMPLES: { path: string; allow: string; undeclared: string }[] = [
  { path: '/health/', allow: 'GET, HEAD', undeclared: 'POST' },
  { path: '/directions/v2/', allow: 'POST', undeclared: 'GET' },
  { path: '/reports/12/', allow: 'GET, HEAD', undeclared: 'PUT' },
  { path: '/api/admin/keys/', allow: 'GET, HEAD, POST', undeclared: 'DELETE' },
  { path: '/api/admin/events/7/', allow: 'DELETE, GET, HEAD, PUT', undeclared: 'PATCH' },
  { path: '/user/', allow: 'GET, HEAD, PATCH', undeclared: 'PUT' },
  { path: '/auth/v1/oauth/token', allow: 'POST', undeclared: 'GET' },
  { path: '/safety-map/nyc/tiles/14/4823/6160', allow: 'GET, HEAD', undeclared: 'DELETE' },
  { path: '/storage/v1/object/public/users/1/photo.jpg', allow: 'GET, HEAD', undeclared: 'PUT' },
];

describe('a method a path does not take', () => {
  it('answers 405 with Allow and the error body, without credentials', async () => {
    for (const { path, allow, undeclared } of SAMPLES) {
      for (const method of ['TRACE', 'QUERY', 'OPTIONS', 'PROPFIND', 'M-SEARCH', 'PURGE', undeclared]) {
        expect405(await call(method, path), allow, `${method} ${path}`);
      }
    }
  });

  it('answers the same with a valid key, an invalid key or a malformed token (no 401 first)', async () => {
    for (const { path, allow } of SAMPLES) {
      for (const headers of [
        { apikey: appKey } as Record<string, string>,
        { apikey: 'qw_app_not-a-key' },
        { authorization: 'Bearer not.a.token' },
      ]) {
        expect405(await call('TRACE', path, headers), allow, `TRACE ${path} ${Object.keys(headers)}`);
      }
    }
  });

  it('never reads the body: QUERY with or without a Content-Type, a GET-only path sent broken JSON', async () => {
    expect405(await call('QUERY', '/health/'), 'GET, HEAD', 'QUERY without Content-Type');
    expect405(
      await call('QUERY', '/directions/v2/', { 'content-type': 'application/json' }, '{"origin": [1, 2]}'),
      'POST',
      'QUERY with JSON',
    );
    expect405(
      await call('POST', '/health/', { 'content-type': 'application/json' }, '{"broken": '),
      'GET, HEAD',
      'POST of broken JSON',
    );
    expect405(
      await call('PUT', '/reports/1/', { 'content-type': 'text/plain', apikey: 'bad' }, 'x'.repeat(100)),
      'GET, HEAD',
      'PUT of an unknown media type',
    );
  });

  it('answers 405 with every documented method in Allow on every path of the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const paths = Object.entries(doc.paths);
    expect(paths.length).toBeGreaterThan(50);
    for (const [template, operations] of paths) {
      const path = template.replace(/\{[^}]+\}/g, '1');
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      for (const method of ['TRACE', 'QUERY']) {
        const res = await call(method, path);
        expect(res.status, `${method} ${path}: ${res.body}`).toBe(405);
        const allow = (res.headers.allow ?? '').split(', ');
        for (const m of documented) expect(allow, `${method} ${path}`).toContain(m);
        if (documented.includes('GET')) expect(allow, `${method} ${path}`).toContain('HEAD');
        expect(JSON.parse(res.body)).toEqual({ error: 'Method not allowed' });
      }
    }
  });
});

describe('what stays as it was', () => {
  it('answers unknown paths 404 whatever the method', async () => {
    for (const method of ['GET', 'POST', 'TRACE', 'QUERY', 'OPTIONS', 'PROPFIND', 'M-SEARCH']) {
      for (const path of ['/nope/', '/directions/v7/', '/health/extra/']) {
        const res = await call(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.allow).toBeUndefined();
        expect(JSON.parse(res.body)).toEqual({ error: 'Unknown endpoint or API version' });
      }
    }
    const json = await call('POST', '/nope/', { 'content-type': 'application/json' }, '{"broken": ');
    expect(json.status).toBe(404);
  });

  it('serves declared methods, HEAD with GET, and refuses missing credentials on them with 401', async () => {
    expect((await call('GET', '/health/')).status).toBe(200);
    const head = await call('HEAD', '/health/');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await call('GET', '/docs/json')).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/directions/v2/'],
      ['GET', '/reports/12/'],
      ['GET', '/api/admin/keys/'],
      ['DELETE', '/api/admin/keys/3/'],
    ]) {
      const res = await call(method as string, path as string);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.allow).toBeUndefined();
    }
    // A key is checked on a declared method as before.
    expect((await call('GET', '/api/admin/keys/', { apikey: 'qw_app_not-a-key' })).status).toBe(401);
  });

  it('keeps the place-search catch-all: an unknown subroute is 404 whatever the method', async () => {
    const service = issueKey(app.repos, { kind: 'service', name: 's', source: null, legacyV1: false }).key;
    for (const method of ['GET', 'TRACE', 'PROPFIND']) {
      const res = await call(method, '/functions/v1/place-search/nearby', { apikey: service });
      expect(res.status, method).toBe(404);
    }
    // Its known subroutes take their own methods.
    expect405(await call('TRACE', '/functions/v1/place-search/details'), 'GET, HEAD', 'TRACE details');
  });
});
