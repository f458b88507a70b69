// Uploads are streamed and checked as they arrive (issue 26, finding 4): parts the route does not
// take stop the reading at once, bytes are capped per request and uploads per rider, and memory
// stays flat under concurrent large uploads (measured as the process's RSS).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import type { Config } from '../../server/src/config.js';
import { testConfig } from '../helpers.js';

const MB = 1024 * 1024;
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const BOUNDARY = '----quietway-upload-boundary';

interface Part {
  field: string;
  name: string;
  bytes: number;
  /** Starts the content with a PNG signature. */
  png?: boolean;
}

interface UploadResult {
  status: number;
  body: string;
  sentBytes: number;
}

/**
 * Streams a multipart body of generated parts (never held in memory whole), honouring back-pressure,
 * and stops sending as soon as the server answers or closes.
 */
function streamUpload(port: number, url: string, token: string, parts: Part[]): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sentBytes = 0;
    let stopped = false;
    let status = 0;
    let body = '';
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: url,
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'transfer-encoding': 'chunked',
      },
    });
    let wake: (() => void) | null = null;
    const stop = () => {
      stopped = true;
      wake?.();
    };
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      stop();
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status, body, sentBytes }));
      res.on('error', () => resolve({ status, body, sentBytes }));
    });
    req.on('error', (err) => {
      stop();
      if (status === 0) reject(err);
    });
    const send = async (data: Buffer) => {
      if (stopped) return;
      sentBytes += data.length;
      if (!req.write(data)) {
        await new Promise<void>((r) => {
          wake = r;
          req.once('drain', r);
        });
        wake = null;
      }
    };
    (async () => {
      for (const p of parts) {
        await send(
          Buffer.from(
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.field}"; filename="${p.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
        );
        let left = p.bytes;
        if (p.png) {
          await send(PNG_HEAD);
          left -= PNG_HEAD.length;
        }
        while (left > 0 && !stopped) {
          const n = Math.min(left, chunk.length);
          await send(n === chunk.length ? chunk : chunk.subarray(0, n));
          left -= n;
        }
        await send(Buffer.from('\r\n'));
      }
      await send(Buffer.from(`--${BOUNDARY}--\r\n`));
      if (!stopped) req.end();
    })().catch(reject);
  });
}

describe('uploads', () => {
  let app: FastifyInstance;
  let config: Config;
  let port: number;
  const tokens: string[] = [];
  let eventId: number;

  beforeAll(async () => {
    config = testConfig({ QUIETWAY_MAX_UPLOAD_BYTES: String(25 * MB), QUIETWAY_MAX_UPLOADS_PER_USER: '2' });
    app = await buildApp({ config });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
    for (let i = 0; i < 8; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/auth/v1/signup',
        payload: { email: `rider${i}@example.org`, password: 'correct horse battery', name: `Rider ${i}` },
        remoteAddress: `10.0.0.${i + 1}`,
      });
      expect(res.statusCode).toBe(201);
      tokens.push(res.json().access_token);
    }
    const ev = await app.inject({
      method: 'POST',
      url: '/api/admin/events/',
      headers: { authorization: `Bearer ${tokens[0]}` },
      payload: {
        name: 'Photo ride',
        is_leisure_route: true,
        destination: { latitude: 40.7, longitude: -74 },
      },
    });
    expect(ev.statusCode).toBe(201);
    eventId = ev.json().id;
  });
  afterAll(() => app.close());

  it('stops at the first unexpected part: eight concurrent 200 MB uploads leave memory flat', async () => {
    const junk: Part[] = Array.from({ length: 20 }, (_, i) => ({
      field: 'junk',
      name: `j${i}.bin`,
      bytes: 10 * MB,
    }));
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const started = Date.now();
    const results = await Promise.all(tokens.map((t) => streamUpload(port, '/user/upload-photo/', t, junk)));
    clearInterval(sampler);
    const growthMb = (peak - before) / MB;
    console.log(
      `8 uploads of 20 × 10 MB unexpected parts: answered in ${Date.now() - started} ms, RSS +${growthMb.toFixed(0)} MB, ${(results.reduce((a, r) => a + r.sentBytes, 0) / MB).toFixed(0)} MB sent`,
    );
    for (const r of results) {
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error).toMatch(/^photo: unexpected part "junk"/);
    }
    expect(growthMb).toBeLessThan(150);
  });

  it('caps the bytes of one request across its files, and keeps nothing of a refused one', async () => {
    const three: Part[] = Array.from({ length: 3 }, (_, i) => ({
      field: 'images',
      name: `p${i}.png`,
      bytes: 9 * MB,
      png: true,
    }));
    const r = await streamUpload(port, `/api/admin/events/${eventId}/images/`, tokens[0] as string, three);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({
      error: 'Request body too large',
      details: `at most ${25 * MB} bytes per upload`,
    });
    const folder = path.join(config.dataDir, 'storage', 'events', String(eventId));
    const left = fs.existsSync(folder) ? fs.readdirSync(folder) : [];
    expect(left).toEqual([]);
  });

  it('refuses a file over the per-file limit with 413, and stores a good one streamed', async () => {
    const big = await streamUpload(port, '/user/upload-photo/', tokens[1] as string, [
      { field: 'photo', name: 'big.png', bytes: 11 * MB, png: true },
    ]);
    expect(big.status).toBe(413);
    const ok = await streamUpload(port, '/user/upload-photo/', tokens[1] as string, [
      { field: 'photo', name: 'ok.png', bytes: 2 * MB, png: true },
    ]);
    expect(ok.status).toBe(200);
    const url = JSON.parse(ok.body).image_url as string;
    const key = url.slice(url.indexOf('/storage/v1/object/public/') + '/storage/v1/object/public/'.length);
    expect(fs.statSync(path.join(config.dataDir, 'storage', key)).size).toBe(2 * MB);
  });

  it('lets one rider have only so many uploads in progress', async () => {
    // Two uploads that stall half-way hold the rider's places; the third is refused at once.
    const stalled = [0, 1].map(() => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        path: '/user/upload-photo/',
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens[2]}`,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'transfer-encoding': 'chunked',
        },
      });
      req.on('error', () => {});
      req.write(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      req.write(Buffer.concat([PNG_HEAD, Buffer.alloc(1024)]));
      return req;
    });
    await new Promise((r) => setTimeout(r, 300));
    const third = await streamUpload(port, '/user/upload-photo/', tokens[2] as string, [
      { field: 'photo', name: 'c.png', bytes: 1024, png: true },
    ]);
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toMatchObject({ error: 'Too many uploads in progress' });
    for (const s of stalled) s.destroy();
    await new Promise((r) => setTimeout(r, 300));
    const later = await streamUpload(port, '/user/upload-photo/', tokens[2] as string, [
      { field: 'photo', name: 'd.png', bytes: 1024, png: true },
    ]);
    expect(later.status).toBe(200);
  });

  it('answers 400, not 500, to a multipart Content-Type without a boundary (found by schemathesis)', async () => {
    for (const url of ['/user/upload-photo/', `/api/admin/events/${eventId}/images/`]) {
      const res = await app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'multipart/form-data' },
        payload: 'x',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(/no boundary/);
    }
  });
});
