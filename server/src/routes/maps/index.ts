// GET /map/ (the public safety map) and /map/route (the route planner): pages bundled at build time
// from web/ with MapLibre GL JS (`npm run build:web`, into build/web/), served with their scripts,
// styles and MapLibre's worker from /map/assets/. No external tile, font or script host: the base map
// is the graph's own roads (the safety-map tiles) and the pages talk only to this server.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../config.js';
import { HttpError } from '../../errors.js';

export const WEB_BUILD = path.join(PROJECT_ROOT, 'build', 'web');
// MapLibre starts its workers from /map/assets/ (same origin); it sets inline styles on its controls.
const CSP =
  "default-src 'none'; script-src 'self'; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const page = { access: { public: true } };
const PRECOMPRESSED = [
  { name: 'br', ext: '.br', accepted: /\bbr\b/ },
  { name: 'gzip', ext: '.gz', accepted: /\bgzip\b/ },
];

async function readBuilt(file: string): Promise<{ body: Buffer; etag: string }> {
  const full = path.join(WEB_BUILD, file);
  try {
    const [body, st] = await Promise.all([fs.promises.readFile(full), fs.promises.stat(full)]);
    return { body, etag: `"${st.size.toString(36)}-${Math.round(st.mtimeMs).toString(36)}"` };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!fs.existsSync(WEB_BUILD)) {
      throw new HttpError(503, 'The map pages are not built on this server: run npm run build:web');
    }
    throw new HttpError(404, 'Unknown endpoint or API version');
  }
}

const mapRoutes: FastifyPluginAsyncZod = async (app) => {
  for (const [url, file] of [
    ['/map/', 'map.html'],
    ['/map/route', 'route.html'],
  ] as const) {
    app.get(
      url,
      { config: page, schema: { tags: ['pages'], summary: 'A map page' } },
      async (_request, reply) => {
        const { body } = await readBuilt(file);
        return reply
          .type('text/html; charset=utf-8')
          .header('Content-Security-Policy', CSP)
          .header('Cache-Control', 'no-cache')
          .send(body);
      },
    );
  }

  app.get(
    '/map/assets/:file',
    {
      config: page,
      schema: {
        tags: ['pages'],
        summary: 'A script, style sheet or image of the map pages',
        params: z.object({ file: z.string().regex(/^[\w-]+(\.[\w-]+)*$/, 'not an asset name') }),
      },
    },
    async (request, reply) => {
      const { file } = request.params;
      const type = TYPES[path.extname(file)];
      if (!type) throw new HttpError(404, 'Unknown endpoint or API version');
      // A compressed copy made at build time, when the browser takes it.
      const accepts = String(request.headers['accept-encoding'] ?? '');
      const encoding = PRECOMPRESSED.find(
        (e) => e.accepted.test(accepts) && fs.existsSync(path.join(WEB_BUILD, `${file}${e.ext}`)),
      );
      const { body, etag } = await readBuilt(encoding ? `${file}${encoding.ext}` : file);
      reply
        .header('ETag', etag)
        .header('Cache-Control', 'no-cache')
        .header('Vary', 'Accept-Encoding')
        .header('Content-Security-Policy', CSP);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      if (encoding) reply.header('Content-Encoding', encoding.name);
      return reply.type(type).send(body);
    },
  );
};

export default mapRoutes;
