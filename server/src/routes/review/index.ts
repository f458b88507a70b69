// GET /review/: the reviewer's page (one self-contained HTML file, no external assets). It signs an
// admin in with the password grant and works through the admin API: the queue, a report's
// surroundings drawn from the graph by safety class, the proposed change (editable), accept, close.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { PROJECT_ROOT } from '../../config.js';

const PAGE = path.join(PROJECT_ROOT, 'server', 'src', 'routes', 'review', 'page.html');
const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'";

const reviewRoutes: FastifyPluginAsyncZod = async (app) => {
  const html = fs.readFileSync(PAGE, 'utf8');
  app.get(
    '/review/',
    {
      config: { access: { public: true } },
      schema: { tags: ['pages'], summary: 'The report reviewer’s page' },
    },
    async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', CSP)
        .header('Cache-Control', 'no-store')
        .send(html),
  );
};

export default reviewRoutes;
