// The routing engine as an application service: the native addon plus the city graphs it loads from
// the graph directory (`<data>/graphs/<city>.qwg`, with an optional `<city>.weighting.json` beside
// it). Graphs load in the background, QUIETWAY_LOAD_CONCURRENCY at a time, once the app is built
// (`start()`, called by buildApp): the server answers at once, a city routes as soon as its own graph
// has loaded, and a request that needs a city still loading answers 503 with `Retry-After`
// (errors.ts `cityLoading`). A graph that fails to load is logged and skipped; `/health/` shows each
// city's state. Beside each graph, how much of the city's polygon its data covers
// (routing/data-coverage.ts), and the snap radius every routing endpoint applies.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Engine } from '../../../addon/index.js';
import type { Config } from '../config.js';
import { cityLoading, type HttpError } from '../errors.js';
import { native } from '../native.js';
import { area, type CoverageArea, cityList, configuredCities, contains } from '../routing/coverage.js';
import { type DataCoverage, dataCoverageOf, readDataCoverage } from '../routing/data-coverage.js';
import { graphFiles, loadNative } from '../routing/preload.js';

export interface LoadedCity {
  id: string;
  name: string;
  timezone: string;
  graphVersion: string;
  hasLightingData: boolean;
  /** The city's coverage areas (from its configured boundary, stored in the graph). */
  coverage: CoverageArea[];
  /** `[min lon, min lat, max lon, max lat]` of the graph's junctions. */
  dataBbox: [number, number, number, number];
  /** How much of the coverage polygon the graph's data covers; null when it could not be measured. */
  dataCoverage: DataCoverage | null;
  engine: Engine;
}

/** A graph file that did not load. */
export interface FailedCity {
  /** The city id its file name gives (`<id>.qwg`). */
  id: string;
  file: string;
  error: string;
}

export type LoadState = 'loading' | 'ready' | 'failed';

/** One graph file of the graph folder and how its loading went. */
export interface CityLoad {
  /** The city id its file name gives (`<id>.qwg`). */
  id: string;
  /** The id the loaded graph gives itself (normally `id`); null until it is ready. */
  cityId: string | null;
  file: string;
  state: LoadState;
  /** When the server asked for it (start-up), ms since the epoch. */
  queuedAt: number;
  /** When the engine began reading it; null while it waits for a free loader. */
  startedAt: number | null;
  /** When it became ready or failed; null while loading. */
  endedAt: number | null;
  /** Why it failed (the graph folder left out of paths: `/health/` is public). */
  error: string | null;
}

export interface EngineService {
  version: string;
  /** Every configured city's coverage, loaded or not (to tell an outage from outside coverage). */
  configured: CoverageArea[];
  /** Graphs in the graph folder that failed to load (so far). */
  failed: FailedCity[];
  /**
   * Metres: a waypoint snapped farther than this from where it was asked for has no route
   * (routing/snapping.ts; QUIETWAY_SNAP_RADIUS_M).
   */
  snapRadiusM: number;
  /** Where the routing layer notes requests it cannot serve from the data it has. */
  log: FastifyBaseLogger;
  /** The cities ready to route, in the order of their graph files. */
  cities(): LoadedCity[];
  city(id: string): LoadedCity | undefined;
  /** Every graph file of the graph folder with its load state, in file order. */
  loads(): CityLoad[];
  /** The graphs still loading (or waiting for a free loader). */
  loading(): CityLoad[];
  /**
   * Resolves once every graph has loaded or failed, and the data coverage of any loaded without a
   * stored one is measured: buildApp waits for it unless told not to, and tests and benchmarks that
   * build the app route right after.
   */
  ready: Promise<void>;
  /** Starts loading the graphs (buildApp does, once every plugin is registered); `ready`. Idempotent. */
  start(): Promise<void>;
  /**
   * Calls `fn` for each city as its graph loads, before any request can be routed in it (and at once
   * for a city already ready): what needs a city's engine set up (road changes, disruptions) does it
   * here. `fn` is synchronous; one that throws makes the city fail to load.
   */
  onCity(fn: (city: LoadedCity) => void): void;
  /** The 503 (with `Retry-After`) for a request that needs this city while its graph loads; else null. */
  loadingError(id: string): HttpError | null;
  /**
   * The 503 for points that may lie in a city still loading: inside the configured coverage of one,
   * or anywhere while a graph of a city without configured coverage loads (its coverage is known
   * only once loaded). Null when no loading city can hold them.
   */
  loadingErrorAt(points: [number, number][]): HttpError | null;
  /** The city's time zone: its graph's, else its configured one (a city still loading), else UTC. */
  timezone(id: string): string;
}

declare module 'fastify' {
  interface FastifyInstance {
    engine: EngineService;
  }
}

const GRAPH_EXT = '.qwg';

/**
 * Loads one graph file (on libuv's pool) with its weighting override, and its data coverage when
 * stored beside it (else `dataCoverage` is null: see `measureDataCoverageOf`). `queryGraphMb`: the
 * megabytes its cycling metrics may spend on pruned query graphs (the engine's default if absent).
 */
export async function loadCityFile(file: string, queryGraphMb?: number): Promise<LoadedCity> {
  const engine = await loadNative(file, queryGraphMb);
  const s = engine.stats();
  const coverage = (JSON.parse(s.coverageJson) as [number, number][][][][]).map((polygons, i) =>
    area(s.id, s.areaNames[i] ?? s.name, polygons),
  );
  return {
    id: s.id,
    name: s.name,
    timezone: s.timezone,
    graphVersion: s.graphVersion,
    hasLightingData: s.hasLightingData,
    coverage,
    dataBbox: s.bbox as [number, number, number, number],
    // Stored beside the graph at build (quietway build-graph); for a graph built without it, measured
    // once the city routes (measureDataCoverageOf), not before: it reads every road of the graph,
    // 8-10 s for a whole city, and only /health/ and log lines need it.
    dataCoverage: readDataCoverage(file, s.graphVersion),
    engine,
  };
}

/** Measures (and stores beside the graph) the data coverage of a city loaded without it. */
export async function measureDataCoverageOf(file: string, city: LoadedCity): Promise<void> {
  city.dataCoverage = await dataCoverageOf(file, city.engine, city.coverage).catch(() => null);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export default fp(
  async (app: FastifyInstance, opts: { config: Config }) => {
    const addon = native();
    const { config } = opts;
    const only = config.cities;
    if (only) {
      const missing = only.filter((id) => !fs.existsSync(path.join(config.graphDir, `${id}${GRAPH_EXT}`)));
      if (missing.length > 0) {
        app.log.error({ cities: missing }, 'QUIETWAY_CITIES names cities without a graph file');
      }
      app.log.info({ cities: only }, 'loading only the cities of QUIETWAY_CITIES');
    }
    const entries: CityLoad[] = graphFiles(config.graphDir, only).map((file) => ({
      id: path.basename(file, GRAPH_EXT),
      cityId: null,
      file,
      state: 'loading',
      queuedAt: Date.now(),
      startedAt: null,
      endedAt: null,
      error: null,
    }));
    const byId = new Map<string, LoadedCity>();
    /** The ready cities in file order (rebuilt when one arrives). */
    let readyCities: LoadedCity[] = [];
    const failed: FailedCity[] = [];
    const listeners: ((city: LoadedCity) => void)[] = [];
    // Read on first use, not at start-up: parsing the boundary files takes 0.2-0.4 s of the main
    // thread, which registering the server and the graphs' loads beside it need more.
    let configuredAreas: CoverageArea[] | undefined;
    const configured = () => {
      configuredAreas ??= configuredCities(config.sharedDataDir);
      return configuredAreas;
    };
    const listing = cityList();
    let closed = false;

    /** Makes a loaded city routable, after every listener has set it up; throws if one fails. */
    const publish = (entry: CityLoad, city: LoadedCity) => {
      byId.set(city.id, city);
      try {
        // Synchronous: no request is routed between the city joining `byId` and this loop's end.
        for (const fn of listeners) fn(city);
      } catch (err) {
        byId.delete(city.id);
        throw new Error(`set-up after loading failed: ${(err as Error).message}`);
      }
      entry.cityId = city.id;
      const inOrder = entries.flatMap((e) => {
        const c = e.cityId === null ? undefined : byId.get(e.cityId);
        return c ? [c] : [];
      });
      // Two files of one city: the last loaded serves it.
      readyCities = [...new Set(inOrder)];
    };

    /** Data coverage measured for cities loaded without it; `ready` waits for them too. */
    const measuring: Promise<void>[] = [];
    const loadOne = async (entry: CityLoad) => {
      entry.startedAt = Date.now();
      app.log.info({ city: entry.id, file: entry.file }, `loading the graph of ${entry.id}`);
      let city: LoadedCity;
      try {
        city = await loadCityFile(entry.file, config.queryGraphMb ?? undefined);
        if (closed) return;
        if (city.id !== entry.id) {
          app.log.warn({ file: entry.file, city: city.id }, `the graph in ${entry.file} is of ${city.id}`);
        }
        publish(entry, city);
      } catch (err) {
        if (closed) return;
        const message = (err as Error).message;
        entry.state = 'failed';
        entry.endedAt = Date.now();
        entry.error = message.replaceAll(config.graphDir + path.sep, '');
        failed.push({ id: entry.id, file: entry.file, error: message });
        app.log.error(
          { city: entry.id, file: entry.file, ms: entry.endedAt - entry.startedAt },
          `city graph not loaded: ${message}`,
        );
        return;
      }
      entry.state = 'ready';
      entry.endedAt = Date.now();
      app.log.info(
        {
          city: city.id,
          graphVersion: city.graphVersion,
          dataBbox: city.dataBbox,
          polygonShare: city.dataCoverage?.polygon_share ?? null,
          ms: entry.endedAt - entry.startedAt,
          waitedMs: entry.startedAt - entry.queuedAt,
        },
        `loaded ${city.name} in ${seconds(entry.endedAt - entry.startedAt)}`,
      );
      if (city.dataCoverage === null) {
        const t = Date.now();
        measuring.push(
          measureDataCoverageOf(entry.file, city).then(() => {
            app.log.info(
              { city: city.id, polygonShare: city.dataCoverage?.polygon_share ?? null, ms: Date.now() - t },
              `measured how much of ${city.name}'s polygon its data covers`,
            );
          }),
        );
      }
    };

    let resolveReady: () => void = () => {};
    const readyPromise = new Promise<void>((resolve) => {
      resolveReady = resolve;
    });
    let started = false;
    const start = () => {
      if (started) return readyPromise;
      started = true;
      const t0 = Date.now();
      for (const e of entries) e.queuedAt = t0;
      let next = 0;
      const loader = async () => {
        while (!closed && next < entries.length) await loadOne(entries[next++] as CityLoad);
      };
      const n = Math.min(config.loadConcurrency, entries.length);
      const loaders = Promise.all(Array.from({ length: n }, loader)).catch((err: unknown) => {
        app.log.error({ err }, 'city graph loading stopped');
      });
      void loaders.then(async () => {
        if (!closed) {
          if (entries.length > 0) {
            app.log.info(
              { ready: readyCities.length, failed: failed.length, ms: Date.now() - t0 },
              `city graphs loaded in ${seconds(Date.now() - t0)}`,
            );
          }
          if (readyCities.length === 0) {
            app.log.warn(
              { graphDir: config.graphDir },
              'no city graph loaded: routing answers 503 until one is built (quietway build-graph)',
            );
          }
        }
        await Promise.all(measuring);
        resolveReady();
      });
      return readyPromise;
    };

    const nameOf = (id: string) => configured().find((a) => a.id === id)?.name ?? listing[id]?.name ?? id;
    const loading = () => entries.filter((e) => e.state === 'loading');

    app.decorate('engine', {
      version: addon.engineVersion(),
      get configured() {
        return configured();
      },
      failed,
      snapRadiusM: config.snapRadiusM,
      log: app.log,
      cities: () => readyCities,
      city: (id: string) => byId.get(id),
      loads: () => entries,
      loading,
      ready: readyPromise,
      start,
      onCity: (fn: (city: LoadedCity) => void) => {
        listeners.push(fn);
        for (const c of readyCities) fn(c);
      },
      loadingError: (id: string) =>
        entries.some((e) => e.id === id && e.state === 'loading') ? cityLoading(nameOf(id)) : null,
      loadingErrorAt: (points: [number, number][]) => {
        const pending = loading();
        const inside = pending.find((e) =>
          configured().some((a) => a.id === e.id && points.every((p) => contains(a, p))),
        );
        if (inside) return cityLoading(nameOf(inside.id));
        // A city without configured coverage may hold the points: its coverage is known once loaded.
        const unknown = pending.some((e) => !configured().some((a) => a.id === e.id));
        return unknown ? cityLoading(null) : null;
      },
      timezone: (id: string) => byId.get(id)?.timezone ?? listing[id]?.timezone ?? 'UTC',
    } satisfies EngineService);
    app.addHook('onClose', async () => {
      // Loads under way finish on libuv's pool; what they bring is dropped.
      closed = true;
    });
  },
  { name: 'engine' },
);
