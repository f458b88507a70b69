// Uploads: multipart parsing with a size limit, the storage backend (local folder by default, an
// S3-compatible bucket when QUIETWAY_S3_BUCKET is set), and the public file route of the local backend.
import path from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import type { StorageBackend } from '../storage/index.js';
import { LocalStorage } from '../storage/local.js';
import type { UploadLimits } from '../storage/uploads.js';

declare module 'fastify' {
  interface FastifyInstance {
    storage: StorageBackend;
    uploadLimits: UploadLimits;
    /**
     * Removes left-overs of failed uploads older than `olderThanMs` (by default the grace period
     * below); what the periodic sweep runs.
     */
    sweepStorage(olderThanMs?: number): Promise<{ tmp: number; orphans: number }>;
  }
}

const PUBLIC_PATH = '/storage/v1/object/public/';

export default fp(
  async (app: FastifyInstance, { config, storage }: { config: Config; storage?: StorageBackend }) => {
    await app.register(multipart, {
      limits: { fileSize: config.maxImageBytes, files: 20, fields: 20 },
      throwFileSizeLimit: true,
    });
    app.decorate('uploadLimits', {
      maxFileBytes: config.maxImageBytes,
      maxRequestBytes: config.limits.maxUploadBytes,
      maxPerUser: config.limits.maxUploadsPerUser,
    });
    // The AWS SDK is loaded only when S3 is configured.
    const backend: StorageBackend =
      storage ??
      (config.s3
        ? new (await import('../storage/s3.js')).S3Storage(config.s3, (err) =>
            app.log.error({ err }, 'the S3 image store failed'),
          )
        : new LocalStorage(path.join(config.dataDir, 'storage'), config.publicUrl));
    app.decorate('storage', backend);
    // Left-overs of killed or failed uploads, at start and then periodically. Anything younger than
    // the grace period may be an upload in progress.
    const sweepGraceMs = Math.max(10 * 60_000, 2 * config.limits.requestTimeoutMs);
    const sweepStorage = async (olderThanMs = sweepGraceMs) => {
      if (!backend.sweep) return { tmp: 0, orphans: 0 };
      // Records hold public URLs (and event images their keys too): the backend's own URLs, or the
      // local backend's, which stay referenced after a switch to S3.
      const refs = new Set<string>();
      for (const r of app.repos.platform.storageReferences()) {
        const key = backend.keyFromUrl?.(r);
        const at = r.indexOf(PUBLIC_PATH);
        refs.add(key ?? (at >= 0 ? r.slice(at + PUBLIC_PATH.length) : r));
      }
      return backend.sweep((key) => refs.has(key), olderThanMs);
    };
    app.decorate('sweepStorage', sweepStorage);
    const sweep = async () => {
      try {
        const removed = await sweepStorage();
        if (removed.tmp + removed.orphans > 0) app.log.info(removed, 'removed left-over upload files');
      } catch (err) {
        app.log.warn({ err }, 'sweeping left-over upload files failed');
      }
    };
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      // A bucket that is slow or down must not hold the start: S3's first sweep runs in the background.
      const first = sweep();
      if (backend.kind === 'local') await first;
      if (config.storageSweepMinutes > 0) {
        timer = setInterval(sweep, config.storageSweepMinutes * 60_000);
        timer.unref();
      }
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      backend.close?.();
    });

    app.get(
      '/storage/v1/object/public/*',
      {
        config: { access: { public: true } },
        schema: { tags: ['storage'], summary: 'A stored image (profile photo, event image)' },
      },
      async (req, reply) => {
        const key = (req.params as { '*': string })['*'];
        if (!backend.get || key.includes('..')) throw new HttpError(404, 'Object not found');
        const file = await backend.get(key);
        if (!file) throw new HttpError(404, 'Object not found');
        reply.header('Cache-Control', 'public, max-age=86400');
        return reply.type(file.contentType).send(file.data);
      },
    );
  },
  { name: 'files', dependencies: ['storage'] },
);
