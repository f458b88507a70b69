// What one client may make the server spend (issue 26, findings 2 and 5): stalled and trickled
// bodies, connections per client, body size per route and JSON nesting. Over raw sockets against a
// listening server, since the point is what happens on the wire.

import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { testConfig } from '../helpers.js';

interface RawResult {
  /** Everything the server sent. */
  text: string;
  /** Milliseconds from connecting until the server closed the connection (null: still open). */
  closedAfterMs: number | null;
}

/**
 * Opens a socket, sends `head` (and then each of `trickle` every `everyMs`), and waits up to
 * `waitMs` for the server to close it.
 */
function raw(
  port: number,
  head: string,
  { trickle = [] as string[], everyMs = 500, waitMs = 5000 } = {},
): Promise<RawResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(deadline);
      socket.destroy();
      resolve({ text, closedAfterMs: closed ? Date.now() - started : null });
    };
    const deadline = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      socket.write(head);
      const rest = [...trickle];
      timer = setInterval(() => {
        const next = rest.shift();
        if (next === undefined) clearInterval(timer);
        else if (!socket.destroyed) socket.write(next);
      }, everyMs);
    });
  });
}

const post = (path: string, headers: Record<string, string | number>) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

describe('stalled bodies and connections', () => {
  let app: FastifyInstance;
  let port: number;
  let key: string;

  beforeAll(async () => {
    app = await buildApp({
      config: testConfig({
        QUIETWAY_REQUEST_TIMEOUT_MS: '2000',
        QUIETWAY_HEADERS_TIMEOUT_MS: '1500',
        QUIETWAY_MAX_CONNECTIONS_PER_CLIENT: '5',
      }),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
    key = issueKey(app.repos, { kind: 'app', name: 'Load test', source: null, legacyV1: false }).key;
  });
  afterAll(() => app.close());

  it('cuts a body that stalls after its headers at the request deadline', async () => {
    const r = await raw(port, `${post('/directions/v2/', { apikey: key, 'Content-Length': 1000 })}{"coor`, {
      waitMs: 6000,
    });
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs as number).toBeLessThan(4500);
    expect(r.text).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts headers that trickle in at the headers deadline (slowloris)', async () => {
    const r = await raw(port, 'GET /health/ HTTP/1.1\r\nHost: x\r\n', {
      trickle: Array.from({ length: 20 }, (_, i) => `X-Slow-${i}: 1\r\n`),
      everyMs: 200,
      waitMs: 6000,
    });
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs as number).toBeLessThan(4000);
  });

  it('closes the connection after an error answer instead of reading a trickled body', async () => {
    const r = await raw(port, post('/directions/v2/', { 'Content-Length': 100 }), {
      trickle: Array.from({ length: 12 }, () => ' '),
      everyMs: 500,
      waitMs: 5000,
    });
    expect(r.text).toMatch(/^HTTP\/1\.1 401/);
    expect(r.text).toMatch(/connection: close/i);
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs as number).toBeLessThan(1500);
  });

  it('caps open connections per client, and frees the place when one closes', async () => {
    const idle: net.Socket[] = [];
    for (let i = 0; i < 5; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      idle.push(s);
    }
    // Let the server see all five before the sixth.
    await new Promise((r) => setTimeout(r, 100));
    const refused = await raw(port, 'GET /health/ HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 3000 });
    expect(refused.text).toMatch(/^HTTP\/1\.1 429/);
    expect(refused.text).toContain('Too many connections from this client');
    expect(refused.closedAfterMs).not.toBeNull();
    (idle.pop() as net.Socket).destroy();
    await new Promise((r) => setTimeout(r, 100));
    const ok = await raw(port, 'GET /health/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', {
      waitMs: 3000,
    });
    expect(ok.text).toMatch(/^HTTP\/1\.1 200/);
    for (const s of idle) s.destroy();
  });
});

describe('expensive bodies', () => {
  let app: FastifyInstance;
  let key: string;

  beforeAll(async () => {
    app = await buildApp({ config: testConfig() });
    key = issueKey(app.repos, { kind: 'app', name: 'Bodies', source: null, legacyV1: false }).key;
  });
  afterAll(() => app.close());

  const directions = (payload: string) =>
    app.inject({
      method: 'POST',
      url: '/directions/v2/',
      headers: { apikey: key, 'content-type': 'application/json' },
      payload,
    });

  it('refuses a routing body of 200 KB with 413 before parsing it', async () => {
    const nested = `{"coordinates":[[0,0],[1,1]],"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const res = await directions(nested);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      error: 'Request body too large',
      details: 'at most 16384 bytes on this endpoint',
    });
  });

  it('refuses JSON nested deeper than the limit with 400, small as it is', async () => {
    const nested = `{"coordinates":[[0,0],[1,1]],"x":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    expect(nested.length).toBeLessThan(16 * 1024);
    const res = await directions(nested);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid JSON', details: 'nested deeper than 32 levels' });
    // Brackets inside strings are text, not nesting.
    const quoted = await directions(`{"coordinates":"${'['.repeat(2000)}"}`);
    expect(quoted.statusCode).toBe(400);
    expect(quoted.json().error).toMatch(/^coordinates/);
  });

  it('keeps the general cap for other endpoints', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@example.org', password: 'x'.repeat(2 * 1024 * 1024), name: 'A' }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      error: 'Request body too large',
      details: 'at most 1048576 bytes on this endpoint',
    });
  });
});
