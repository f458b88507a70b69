// Image storage in an S3-compatible bucket (issue 21), against a real S3 server (gofakes3, built by
// test/s3.ts): the backend's contract (put from a buffer and from a stream, single and multipart,
// delete, sweep, a failed stream leaves nothing) and the upload endpoints end to end (the returned
// URL serves the bytes from the bucket).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { Readable } from 'node:stream';
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { type Config, ConfigError, loadConfig } from '../../server/src/config.js';
import { S3Storage } from '../../server/src/storage/s3.js';
import { testConfig } from '../helpers.js';
import { freePort } from '../redis.js';
import { startS3, type TestS3 } from '../s3.js';

const MB = 1024 * 1024;
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `bytes` of PNG-looking data, distinct per seed. */
function png(bytes: number, seed = 1): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = PNG_HEAD.length; i < bytes; i++) b[i] = (i * 31 + seed) & 0xff;
  PNG_HEAD.copy(b);
  return b;
}

/** A stream of `data` in 64 KiB chunks that fails after `failAfter` bytes, if given. */
function chunks(data: Buffer, failAfter?: number): Readable {
  return Readable.from(
    (async function* () {
      for (let at = 0; at < data.length; at += 64 * 1024) {
        if (failAfter !== undefined && at >= failAfter) throw new Error('client went away');
        yield data.subarray(at, at + 64 * 1024);
        await new Promise((r) => setImmediate(r));
      }
    })(),
  );
}

let s3: TestS3;
let client: S3Client;

async function keys(): Promise<string[]> {
  const out = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
  return (out.Contents ?? []).map((o) => o.Key as string).sort();
}

async function openMultipart(): Promise<number> {
  const out = await client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }));
  return out.Uploads?.length ?? 0;
}

beforeAll(async () => {
  s3 = await startS3();
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: s3.env.QUIETWAY_S3_ACCESS_KEY_ID as string,
      secretAccessKey: s3.env.QUIETWAY_S3_SECRET_ACCESS_KEY as string,
    },
  });
}, 20 * 60_000);
afterAll(() => {
  client?.destroy();
  s3?.stop();
});

describe('the S3 storage backend', () => {
  let storage: S3Storage;
  beforeAll(() => {
    const config = testConfig(s3.env);
    storage = new S3Storage(config.s3 as NonNullable<Config['s3']>);
  });
  afterAll(() => storage.close());

  it('stores from a buffer and from streams (one part and multipart); the URLs serve the bytes', async () => {
    const small = png(40 * 1024, 1);
    const streamed = png(300 * 1024, 2);
    const large = png(12 * MB, 3); // three parts of 5 MB
    const urls = [
      await storage.put('contract/buffer.png', small, 'image/png'),
      await storage.put('contract/stream.png', chunks(streamed), 'image/png'),
      await storage.put('contract/large.png', chunks(large), 'image/png'),
    ];
    expect(urls[0]).toBe(`${s3.endpoint}/${s3.bucket}/contract/buffer.png`);
    for (const [i, data] of [small, streamed, large].entries()) {
      const res = await fetch(urls[i] as string);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    }
    expect(await openMultipart()).toBe(0);
  });

  it('leaves nothing behind when a stream fails, before or after its first part went up', async () => {
    const before = await keys();
    await expect(
      storage.put('contract/failed-small.png', chunks(png(MB), 512 * 1024), 'image/png'),
    ).rejects.toThrow('client went away');
    await expect(
      storage.put('contract/failed-multipart.png', chunks(png(14 * MB), 11 * MB), 'image/png'),
    ).rejects.toThrow('client went away');
    // A stream destroyed without an error (an aborted request) fails too.
    // It sends 6 MB and stalls: destroyed once its first part is up.
    const cut = new Readable({ read() {} });
    cut.push(png(6 * MB));
    const put = storage.put('contract/cut.png', cut, 'image/png');
    put.catch(() => {});
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (await openMultipart()) === 0)
      await new Promise((r) => setTimeout(r, 50));
    expect(await openMultipart()).toBe(1);
    cut.destroy();
    await expect(put).rejects.toThrow();
    expect(await keys()).toEqual(before);
    expect(await openMultipart()).toBe(0);
  });

  it('deletes, and a missing key is no error', async () => {
    await storage.put('contract/gone.png', png(1024), 'image/png');
    await storage.delete('contract/gone.png');
    await storage.delete('contract/never-was.png');
    expect(await keys()).not.toContain('contract/gone.png');
    expect(storage.keyFromUrl(storage.url('a/b.png'))).toBe('a/b.png');
    expect(storage.keyFromUrl('https://elsewhere.example/a/b.png')).toBeNull();
  });

  it('refuses keys that leave the key space', async () => {
    for (const key of ['', '/abs.png', 'a/../b.png', 'a//b.png']) {
      await expect(storage.put(key, png(16), 'image/png')).rejects.toThrow(/bad storage key/);
    }
  });

  it('sweeps unreferenced objects and abandoned multipart uploads once old enough', async () => {
    await storage.put('sweep/kept.png', png(1024, 4), 'image/png');
    await storage.put('sweep/orphan.png', png(1024, 5), 'image/png');
    await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: 'sweep/killed.png' }));
    const referenced = (key: string) => !key.startsWith('sweep/') || key === 'sweep/kept.png';
    // Everything is younger than an hour: nothing goes.
    expect(await storage.sweep(referenced, 3_600_000)).toEqual({ tmp: 0, orphans: 0 });
    expect(await openMultipart()).toBe(1);
    // S3 times have whole seconds: wait until "now" is past them.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await storage.sweep(referenced, 0)).toEqual({ tmp: 1, orphans: 1 });
    const left = await keys();
    expect(left).toContain('sweep/kept.png');
    expect(left).not.toContain('sweep/orphan.png');
    expect(await openMultipart()).toBe(0);
  });
});

describe('uploads into S3 through the API', () => {
  let app: FastifyInstance;
  let port: number;
  let token: string;
  let eventId: number;

  beforeAll(async () => {
    app = await buildApp({ config: testConfig({ ...s3.env, QUIETWAY_MAX_UPLOAD_BYTES: String(20 * MB) }) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
    const signup = await app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 's3@example.org', password: 'correct horse battery', name: 'Bucket Rider' },
    });
    expect(signup.statusCode).toBe(201);
    token = signup.json().access_token;
    const ev = await app.inject({
      method: 'POST',
      url: '/api/admin/events/',
      headers: { authorization: `Bearer ${token}` },
      payload: {
        name: 'Bucket ride',
        is_leisure_route: true,
        destination: { latitude: 40.7, longitude: -74 },
      },
    });
    expect(ev.statusCode).toBe(201);
    eventId = ev.json().id;
  });
  afterAll(() => app?.close());

  const post = (url: string, form: FormData) =>
    fetch(`http://127.0.0.1:${port}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });

  it('a profile photo lands in the bucket and its URL serves the bytes', async () => {
    const photo = png(200 * 1024, 6);
    const form = new FormData();
    form.append('photo', new Blob([photo], { type: 'image/png' }), 'me.png');
    const res = await post('/user/upload-photo/', form);
    expect(res.status).toBe(200);
    const url = ((await res.json()) as { image_url: string }).image_url;
    expect(url).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/avatars/.+\\.png$`));
    const served = await fetch(url);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(photo)).toBe(true);
    expect(await keys()).toContain(url.slice(`${s3.endpoint}/${s3.bucket}/`.length));
  });

  it('event images (one over a part) land in the bucket; deleting one removes its object', async () => {
    const images = [png(64 * 1024, 7), png(7 * MB, 8)];
    const form = new FormData();
    for (const [i, data] of images.entries()) {
      form.append('images', new Blob([data], { type: 'image/png' }), `e${i}.png`);
    }
    const res = await post(`/api/admin/events/${eventId}/images/`, form);
    expect(res.status).toBe(201);
    const body = (await res.json()) as { images: { id: number; image_url: string }[] };
    expect(body.images).toHaveLength(2);
    for (const [i, img] of body.images.entries()) {
      expect(img.image_url).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/events/${eventId}/.+\\.png$`));
      const served = await fetch(img.image_url);
      expect(Buffer.from(await served.arrayBuffer()).equals(images[i] as Buffer)).toBe(true);
    }
    const first = body.images[0] as { id: number; image_url: string };
    const del = await app.inject({
      method: 'DELETE',
      url: `/api/admin/events/${eventId}/images/${first.id}/`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(del.statusCode).toBe(200);
    expect((await fetch(first.image_url)).status).toBe(404);
  });

  it('an upload cut off half-way leaves no object and no open multipart upload', async () => {
    const before = await keys();
    const boundary = '----quietway-s3-boundary';
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: `/api/admin/events/${eventId}/images/`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    req.on('error', () => {});
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="images"; filename="cut.png"\r\nContent-Type: image/png\r\n\r\n`,
    );
    // Past the first 5 MB part, so that a multipart upload is open when the client goes away.
    const data = png(8 * MB, 9);
    for (let at = 0; at < data.length; at += MB) {
      if (!req.write(data.subarray(at, at + MB))) await new Promise((r) => req.once('drain', r));
    }
    const opened = Date.now() + 15_000;
    while (Date.now() < opened && (await openMultipart()) === 0) await new Promise((r) => setTimeout(r, 50));
    expect(await openMultipart()).toBe(1);
    req.destroy();
    // The server notices the cut, aborts and cleans up.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await openMultipart()) > 0) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    expect(await openMultipart()).toBe(0);
    expect(await keys()).toEqual(before);
  });

  it("the server's sweep keeps every object a record points to and removes the others", async () => {
    const orphan = await app.storage.put('events/999/orphan.png', png(1024, 10), 'image/png');
    const before = await keys();
    expect(before).toContain('events/999/orphan.png');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await app.sweepStorage()).toEqual({ tmp: 0, orphans: 0 }); // younger than the grace period
    // Referenced: the profile photo and the event image not deleted; the rest (this test's orphan
    // and what the contract tests above left in the bucket) goes.
    const kept = before.filter((k) => k.startsWith('avatars/') || k.startsWith(`events/${eventId}/`));
    expect(kept).toHaveLength(2);
    expect(await app.sweepStorage(0)).toEqual({ tmp: 0, orphans: before.length - 2 });
    expect(await keys()).toEqual(kept);
    expect((await fetch(orphan)).status).toBe(404);
  });

  it('GET /health/ says the images go to S3', async () => {
    const res = await app.inject({ method: 'GET', url: '/health/' });
    expect(res.json().storage.images).toBe('s3');
  });
});

describe('S3 configuration and failures', () => {
  it('is checked at start: the bucket goes with the other settings, keys go in pairs', () => {
    expect(() => loadConfig({ QUIETWAY_S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(ConfigError);
    expect(() => loadConfig({ QUIETWAY_S3_BUCKET: 'b-1', QUIETWAY_S3_ACCESS_KEY_ID: 'k' })).toThrow(
      /go together/,
    );
    expect(() => loadConfig({ QUIETWAY_S3_BUCKET: 'Not_A_Bucket' })).toThrow(/QUIETWAY_S3_BUCKET/);
    const c = loadConfig({ QUIETWAY_S3_BUCKET: 'photos', QUIETWAY_S3_ENDPOINT: 'http://s3.local:9000/' });
    expect(c.s3).toMatchObject({
      endpoint: 'http://s3.local:9000',
      publicUrl: 'http://s3.local:9000/photos',
    });
    expect(loadConfig({ QUIETWAY_S3_BUCKET: 'photos', QUIETWAY_S3_REGION: 'eu-west-1' }).s3?.publicUrl).toBe(
      'https://photos.s3.eu-west-1.amazonaws.com',
    );
    expect(
      loadConfig({
        QUIETWAY_S3_BUCKET: 'photos',
        QUIETWAY_S3_ENDPOINT: 'http://s3.local:9000',
        QUIETWAY_S3_PUBLIC_URL: 'https://img.example.org/',
      }).s3?.publicUrl,
    ).toBe('https://img.example.org');
    expect(loadConfig({}).s3).toBeNull();
  });

  it('a bucket that is missing, unreachable or hangs answers 503 Storage unavailable, not 500', async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    // Accepts connections and never answers.
    const sockets: net.Socket[] = [];
    const hanging = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    for (const env of [
      { ...s3.env, QUIETWAY_S3_BUCKET: 'no-such-bucket' },
      { ...s3.env, QUIETWAY_S3_ENDPOINT: unreachable },
      { ...s3.env, QUIETWAY_S3_ENDPOINT: hangingUrl, QUIETWAY_S3_TIMEOUT_MS: '500' },
    ]) {
      const app = await buildApp({ config: testConfig(env) });
      try {
        const signup = await app.inject({
          method: 'POST',
          url: '/auth/v1/signup',
          payload: { email: 'down@example.org', password: 'correct horse battery', name: 'Down' },
        });
        const boundary = '----quietway-s3-down';
        const started = Date.now();
        const res = await app.inject({
          method: 'POST',
          url: '/user/upload-photo/',
          headers: {
            authorization: `Bearer ${signup.json().access_token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
          },
          payload: Buffer.concat([
            Buffer.from(
              `--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
            ),
            png(4096, 11),
            Buffer.from(`\r\n--${boundary}--\r\n`),
          ]),
        });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toEqual({
          error: 'Storage unavailable',
          details: 'The image store cannot be reached right now; try again later.',
        });
        expect(res.headers['retry-after']).toBe('30');
        expect(Date.now() - started).toBeLessThan(10_000);
        // The profile is unchanged.
        const me = await app.inject({
          method: 'GET',
          url: '/user/',
          headers: { authorization: `Bearer ${signup.json().access_token}` },
        });
        expect(me.json().image_url ?? null).toBeNull();
      } finally {
        await app.close();
      }
    }
    for (const s of sockets) s.destroy();
    hanging.close();
  });
});
