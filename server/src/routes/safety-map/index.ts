// GET /safety-map/…: public safety-map data. The cities, a city's roads for a bbox as GeoJSON, vector
// tiles (layer `roads`) and the disruptions in force. Answers may be cached for a minute, so an
// accepted change shows within one.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../errors.js';
import type { LoadedCity } from '../../plugins/engine.js';
import { disruptionsNow, roadFeatures, vectorTile } from '../../reports/safety-map.js';

/** Largest bbox answered as GeoJSON, square degrees (about 5 × 5 km at mid latitudes). */
const MAX_BBOX_DEG2 = 0.0025;
const CACHE = 'public, max-age=60';
const publicMap = { access: { public: true }, rateClass: 'safety_map' as const };

const bboxParam = z.string().transform((v, ctx) => {
  const n = v.split(',').map(Number);
  const [w, s, e, nn] = n as [number, number, number, number];
  if (
    n.length !== 4 ||
    n.some((x) => !Number.isFinite(x)) ||
    w > e ||
    s > nn ||
    w < -180 ||
    e > 180 ||
    s < -90 ||
    nn > 90
  ) {
    ctx.addIssue({ code: 'custom', message: 'must be min_lon,min_lat,max_lon,max_lat' });
    return z.NEVER;
  }
  return [w, s, e, nn] as [number, number, number, number];
});

/** Encoded tiles kept for as long as clients may cache them. */
const TILE_TTL_MS = 60_000;
const TILE_CACHE_LIMIT = 4000;

const safetyMapRoutes: FastifyPluginAsyncZod = async (app) => {
  const tiles = new Map<string, { at: number; body: Buffer }>();
  const cityOr404 = (id: string): LoadedCity => {
    const c = app.engine.city(id);
    if (c) return c;
    // A city whose graph is still loading is there in a moment: 503 with Retry-After, not 404.
    throw app.engine.loadingError(id) ?? new HttpError(404, 'City not found');
  };

  app.get(
    '/safety-map/',
    {
      config: publicMap,
      schema: { tags: ['safety-map'], summary: 'Cities with safety-map data' },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', CACHE);
      return {
        cities: await Promise.all(
          app.engine.cities().map(async (c) => ({
            id: c.id,
            name: c.name,
            bbox: c.engine.stats().bbox,
            // The bike-share systems configured for the city (the route planner asks for
            // multi-modal options only where there is one).
            bike_share: app.gbfs.forCity(c.id).map((s) => s.name),
          })),
        ),
        attribution: '© OpenStreetMap contributors (ODbL)',
      };
    },
  );

  app.get(
    '/safety-map/:city/roads/',
    {
      config: publicMap,
      schema: {
        tags: ['safety-map'],
        summary:
          'A city’s roads in a bbox (GeoJSON): class, lit, signed routes, changes and avoidances in force',
        params: z.object({ city: z.string() }),
        querystring: z.object({ bbox: bboxParam }),
      },
    },
    async (request, reply) => {
      const city = cityOr404(request.params.city);
      const [w, s, e, n] = request.query.bbox;
      if ((e - w) * (n - s) > MAX_BBOX_DEG2) {
        throw new HttpError(
          400,
          `bbox is too large: at most ${MAX_BBOX_DEG2} square degrees; use the vector tiles`,
        );
      }
      const { features, truncated } = await roadFeatures(city, app.repos, [w, s, e, n]);
      reply.header('Cache-Control', CACHE);
      return { type: 'FeatureCollection', features, ...(truncated ? { truncated: true } : {}) };
    },
  );

  app.get(
    '/safety-map/:city/disruptions/',
    {
      config: publicMap,
      schema: {
        tags: ['safety-map'],
        summary: 'A city’s disruptions in force now (roadworks, closures), with their details and ways',
        params: z.object({ city: z.string() }),
      },
    },
    async (request, reply) => {
      const city = cityOr404(request.params.city);
      reply.header('Cache-Control', CACHE);
      return { disruptions: disruptionsNow(app.repos, city) };
    },
  );

  app.get(
    '/safety-map/:city/tiles/:z/:x/:y',
    {
      config: publicMap,
      schema: {
        tags: ['safety-map'],
        summary: 'A vector tile of a city’s safety map (Mapbox Vector Tile, layer `roads`; zoom 12 to 18)',
        params: z.object({
          city: z.string(),
          z: z.coerce.number().int().min(12, 'zoom must be 12 to 18').max(18, 'zoom must be 12 to 18'),
          x: z.coerce.number().int().min(0),
          y: z
            .string()
            .regex(/^\d+(\.pbf|\.mvt)?$/, 'must be a tile row, optionally with .pbf or .mvt')
            .transform((v) => Number.parseInt(v, 10)),
        }),
      },
    },
    async (request, reply) => {
      const city = cityOr404(request.params.city);
      const { z: zoom, x, y } = request.params;
      if (x >= 2 ** zoom || y >= 2 ** zoom) throw new HttpError(400, 'tile x and y must be below 2^zoom');
      // Keyed on the changes' version: an accepted change is seen by the next tile request.
      const key = `${city.id}/${zoom}/${x}/${y}/${app.roadChanges.version}`;
      const now = Date.now();
      let hit = tiles.get(key);
      if (!hit || now - hit.at > TILE_TTL_MS) {
        if (tiles.size >= TILE_CACHE_LIMIT) tiles.clear();
        hit = { at: now, body: Buffer.from(await vectorTile(city, app.repos, zoom, x, y)) };
        tiles.set(key, hit);
      }
      return reply.header('Cache-Control', CACHE).type('application/vnd.mapbox-vector-tile').send(hit.body);
    },
  );
};

export default safetyMapRoutes;
