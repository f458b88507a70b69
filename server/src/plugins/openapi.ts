// The OpenAPI document, generated from the routes' zod schemas: JSON at /docs/json, browsable at
// /docs/. Both are public. Routes marked `hide` (405/410 answers) stay out of it.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import { documentResponses } from '../openapi-responses.js';
import { SERVER_VERSION } from '../version.js';

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    // Documentation routes are public; every other route states its own access rule.
    app.addHook('onRoute', (route) => {
      if (route.url.startsWith('/docs')) {
        route.config = { ...(route.config ?? {}), access: { public: true } };
      }
    });
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Quietway API',
          version: SERVER_VERSION,
          description:
            'Cycling routing, reports and rider platform. See docs/api.md for the conventions and the choices made where the interface specification is silent.',
        },
        servers: [{ url: config.publicUrl }],
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'API key or user/OAuth access token' },
            apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
          },
        },
      },
      // Every route's answers, errors included, are in the document (openapi-responses.ts).
      transform: (input) => documentResponses(input.route, jsonSchemaTransform(input)),
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'openapi' },
);
