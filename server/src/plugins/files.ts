// Uploads: multipart parsing with a size limit, the storage backend (local folder by default), and
// the public file route of the local backend.
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
  }
}

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
    const backend = storage ?? new LocalStorage(path.join(config.dataDir, 'storage'), config.publicUrl);
    app.decorate('storage', backend);
    app.get(
      '/storage/v1/object/public/*',
      { config: { access: { public: true } }, schema: { hide: true } },
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
  { name: 'files' },
);
