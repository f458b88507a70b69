// GET /health/: liveness plus what a self-hoster wants to see first: versions, every spec city with
// its state (loaded, loading, no data, failed to load) and how its graph's loading went (answered at
// once, while graphs load in the background), the bbox of its graph's data and how much of its
// polygon that covers, whether the server can still write (free space of the data folder, writes
// refused for lack of it) and log (lines dropped), and the state of each bike-share system's GBFS feeds.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { CityLoad, EngineService } from '../../plugins/engine.js';
import { cityList } from '../../routing/coverage.js';
import { SERVER_VERSION } from '../../version.js';

/** Below this much free space the store counts as full. */
const MIN_FREE_BYTES = 1024 * 1024;
/** A write refused for lack of space marks the store full for this long (unless space is seen again). */
const FULL_FOR_MS = 60_000;

const healthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  engine_version: z.string(),
  uptime_seconds: z.number(),
  /** City graphs still loading (0 once start-up loading is over). */
  cities_loading: z.number(),
  cities: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      state: z.enum(['loaded', 'loading', 'no_data', 'failed_to_load']),
      /** How its graph file's loading went; null when the city has no graph file. */
      load: z
        .object({
          state: z.enum(['loading', 'ready', 'failed']),
          /** Loading: seconds since start-up asked for it; ready or failed: how long the load took. */
          seconds: z.number(),
          /** Loading, waiting for a free loader (QUIETWAY_LOAD_CONCURRENCY). */
          queued: z.boolean(),
          error: z.string().nullable(),
        })
        .nullable(),
      graph_version: z.string().nullable(),
      data_bbox: z.array(z.number()).length(4).nullable(),
      polygon_coverage: z
        .object({
          share: z.number(),
          cell_m: z.number(),
          polygon_cells: z.number(),
          covered_cells: z.number(),
        })
        .nullable(),
    }),
  ),
  storage: z.object({
    status: z.enum(['ok', 'full']),
    free_bytes: z.number().nullable(),
    images: z.enum(['local', 's3']),
  }),
  log: z.object({ dropped_lines: z.number(), last_error: z.string().nullable() }),
  bike_share: z.array(
    z.object({
      id: z.string(),
      city: z.string(),
      name: z.string(),
      status: z.enum(['ok', 'degraded', 'stale', 'failing', 'starting']),
      version: z.string().nullable(),
      stations: z.number(),
      vehicles: z.number(),
      feeds: z.array(
        z.object({
          name: z.string(),
          status: z.enum(['ok', 'stale', 'failing', 'starting']),
          last_fetched: z.string().nullable(),
          last_updated: z.string().nullable(),
          ttl: z.number(),
          error: z.string().nullable(),
        }),
      ),
      error: z.string().nullable(),
    }),
  ),
});

/** Free bytes for an unprivileged writer on the file systems of the data folder and the database. */
async function freeBytes(config: Config): Promise<number | null> {
  const dirs = [...new Set([config.dataDir, path.dirname(config.databasePath)])];
  const free = await Promise.all(
    dirs.map((d) =>
      fs.statfs(d).then(
        (s) => s.bavail * s.bsize,
        () => null,
      ),
    ),
  );
  const known = free.filter((f): f is number => f !== null);
  return known.length > 0 ? Math.min(...known) : null;
}

const tenths = (ms: number) => Math.round(ms / 100) / 10;

/** How a graph file's loading went (seconds to a tenth). */
function loadView(l: CityLoad, now: number) {
  return {
    state: l.state,
    seconds: tenths(l.endedAt === null ? now - l.queuedAt : l.endedAt - (l.startedAt ?? l.queuedAt)),
    queued: l.state === 'loading' && l.startedAt === null,
    error: l.error,
  };
}

/** Every configured city in the order of the city list, then any other graph loading, loaded or failed. */
function cityStates(engine: EngineService) {
  const listed = cityList();
  const now = Date.now();
  // A graph's load under the id of the city it holds (its file name's until it is loaded).
  const loads = new Map(engine.loads().map((l) => [l.cityId ?? l.id, l]));
  const ids = [
    ...Object.keys(listed),
    ...engine.cities().map((c) => c.id),
    ...engine.failed.map((f) => f.id),
    ...loads.keys(),
  ];
  return [...new Set(ids)].map((id) => {
    const c = engine.city(id);
    const l = loads.get(id);
    if (!c) {
      const failed = engine.failed.some((f) => f.id === id);
      return {
        id,
        name: listed[id]?.name ?? id,
        state:
          l?.state === 'loading'
            ? ('loading' as const)
            : failed
              ? ('failed_to_load' as const)
              : ('no_data' as const),
        load: l ? loadView(l, now) : null,
        graph_version: null,
        data_bbox: null,
        polygon_coverage: null,
      };
    }
    const m = c.dataCoverage;
    return {
      id,
      name: c.name,
      state: 'loaded' as const,
      load: l ? loadView(l, now) : null,
      graph_version: c.graphVersion,
      data_bbox: c.dataBbox,
      polygon_coverage: m
        ? {
            share: m.polygon_share,
            cell_m: m.cell_m,
            polygon_cells: m.polygon_cells,
            covered_cells: m.covered_cells,
          }
        : null,
    };
  });
}

const health: FastifyPluginAsyncZod<{ config: Config }> = async (app, { config }) => {
  app.get(
    '/health/',
    {
      // Public: load balancers and self-hosters' checks call it without credentials.
      config: { access: { public: true } },
      schema: {
        tags: ['health'],
        summary:
          'Service health, versions, every city with its graph state and data coverage, free space and dropped log lines',
        response: { 200: healthResponse },
      },
    },
    async () => {
      const free = await freeBytes(config);
      const lastFull = app.storageFull.lastAt;
      const recentlyRefused = lastFull !== null && Date.now() - lastFull < FULL_FOR_MS;
      const full =
        (free !== null && free < MIN_FREE_BYTES) || (recentlyRefused && (free ?? 0) < 16 * MIN_FREE_BYTES);
      const sink = app.logSink;
      return {
        status: full ? ('degraded' as const) : ('ok' as const),
        version: SERVER_VERSION,
        engine_version: app.engine.version,
        uptime_seconds: Math.round(process.uptime()),
        cities_loading: app.engine.loading().length,
        cities: cityStates(app.engine),
        storage: {
          status: full ? ('full' as const) : ('ok' as const),
          free_bytes: free,
          // Where uploaded images go (an S3 bucket's own health is not asked here: it would cost a request).
          images: app.storage.kind,
        },
        log: { dropped_lines: sink?.dropped ?? 0, last_error: sink?.lastError ?? null },
        // A bike-share system that is not `ok` leaves its options out of multi-modal trips; the
        // service itself stays `ok` (routing still works).
        bike_share: app.gbfs.systems.map((s) => s.health()),
      };
    },
  );
};

export default health;
