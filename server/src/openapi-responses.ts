// The answers of every route in the OpenAPI document. A route's own zod response schemas stay as they
// are; what a route does not declare is added here, for the document only (serialization is untouched):
// its success status and media type where they are not a JSON 200, and the spec's error body
// (`{error, details?}`, interface spec "Errors") for every 4xx and 5xx. Routes that answer pages,
// tiles, files or redirects say so.
import type { FastifySchema, RouteOptions } from 'fastify';

type JsonSchema = Record<string, unknown>;

/** The one error shape of the API (errors.ts); some errors add fields (e.g. `retry_after`). */
export const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, details: { type: 'string' } },
  additionalProperties: true,
};

const json = (description: string, schema: JsonSchema = {}) => ({
  description,
  content: { 'application/json': { schema } },
});
const media = (description: string, type: string) => ({
  description,
  content: { [type]: { schema: { type: 'string' } } },
});
const empty = (description: string) => ({ description, type: 'null' });
const html = (description: string) => media(description, 'text/html');

const ERRORS = {
  '4XX': json('The request was refused (the body names why)', ERROR_BODY),
  '5XX': json(
    'The server could not answer: 503 while a city’s graph is not loaded (or still loading, with `Retry-After`), storage is full or the image store cannot be reached',
    ERROR_BODY,
  ),
};

/** Success answers of routes that do not declare them with a schema, by `METHOD url`. */
const SUCCESS: Record<string, Record<string, unknown>> = {
  'POST /auth/v1/signup': { 201: json('Signed up: the new session') },
  'POST /auth/v1/logout': { 204: empty('Signed out') },
  'POST /reports/': { 201: json('Received') },
  'POST /user/routes/': { 201: json('The recorded ride') },
  'POST /api/admin/events/': { 201: json('The created event') },
  'POST /api/admin/events/:event_id/images/': { 201: json('The uploaded images') },
  'POST /api/admin/event-categories/': { 201: json('The created category') },
  'POST /api/admin/discounts/': { 201: json('The created discount') },
  'POST /api/admin/events/:event_id/custom-routes/': { 201: json('The created custom route') },
  'POST /api/admin/changes/': { 201: json('The created routing change') },
  'POST /api/admin/disruptions/': { 201: json('The created disruption') },
  'GET /safety-map/:city/tiles/:z/:x/:y': {
    200: media('A Mapbox Vector Tile', 'application/vnd.mapbox-vector-tile'),
  },
  'GET /review/': { 200: html('The report reviewer’s page') },
  'GET /map/': { 200: html('The safety map page') },
  'GET /map/route': { 200: html('The route page') },
  'GET /map/assets/:file': {
    200: { description: 'A script, style sheet or image of the map pages' },
    304: empty('Not modified (If-None-Match)'),
  },
  'GET /storage/v1/object/public/*': { 200: { description: 'A stored image (its own media type)' } },
};

/** Pages and endpoints run by the OAuth provider: pages, redirects and RFC 6749 JSON errors. */
const OAUTH = {
  default: {
    description:
      'oidc-provider’s answer: a JSON document (metadata, tokens, or an RFC 6749 error `{error, error_description}`), an HTML page, or a redirect',
    content: {
      'application/json': { schema: { type: 'object' } },
      'text/html': { schema: { type: 'string' } },
    },
  },
};

/** Adds the undeclared answers of `route` to the transformed schema (its `response`). */
export function documentResponses(
  route: RouteOptions,
  out: { schema: FastifySchema; url: string },
): { schema: FastifySchema; url: string } {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const key = `${methods[0]} ${route.url}`;
  const schema = (out.schema ?? {}) as FastifySchema & { tags?: string[] };
  const tags = schema.tags ?? [];
  const declared = (schema.response as Record<string, unknown> | undefined) ?? {};
  if (tags.includes('oauth') && Object.keys(declared).length === 0) {
    return { ...out, schema: { ...schema, response: OAUTH } };
  }
  const success = Object.keys(declared).some((s) => s.startsWith('2'))
    ? {}
    : (SUCCESS[key] ?? { 200: json('Success') });
  const errors: Record<string, unknown> = { ...ERRORS };
  if (key === 'PATCH /user/') {
    errors['400'] = json('Invalid fields (each named field with its messages), or the error body', {
      anyOf: [
        ERROR_BODY,
        { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      ],
    });
  }
  return { ...out, schema: { ...schema, response: { ...success, ...errors, ...declared } } };
}
