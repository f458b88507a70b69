// The routing engine as an application service: the native addon plus the city graphs it has
// loaded from the graph directory (`<data>/graphs/<city>.qwg`, with an optional
// `<city>.weighting.json` beside it). A graph that fails to load is logged and skipped; the server
// still starts and `/health/` shows what is loaded. Beside each graph, how much of the city's polygon
// its data covers (routing/data-coverage.ts), and the snap radius every routing endpoint applies.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Engine } from '../../../addon/index.js';
import type { Config } from '../config.js';
import { native } from '../native.js';
import { area, type CoverageArea, configuredCities } from '../routing/coverage.js';
import { type DataCoverage, dataCoverageOf } from '../routing/data-coverage.js';

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

export interface EngineService {
  version: string;
  /** Every configured city's coverage, loaded or not (to tell an outage from outside coverage). */
  configured: CoverageArea[];
  /** Graphs in the graph folder that failed to load. */
  failed: FailedCity[];
  /**
   * Metres: a waypoint snapped farther than this from where it was asked for has no route
   * (routing/snapping.ts; QUIETWAY_SNAP_RADIUS_M).
   */
  snapRadiusM: number;
  /** Where the routing layer notes requests it cannot serve from the data it has. */
  log: FastifyBaseLogger;
  cities(): LoadedCity[];
  city(id: string): LoadedCity | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    engine: EngineService;
  }
}

/**
 * Loads every graph in a directory (or only those of the cities in `only`: QUIETWAY_CITIES, a node
 * of a sharded deployment); returns the cities and the files that failed, with why.
 */
export async function loadGraphs(
  graphDir: string,
  only: readonly string[] | null = null,
): Promise<{ cities: LoadedCity[]; failures: FailedCity[] }> {
  const addon = native();
  const cities: LoadedCity[] = [];
  const failures: FailedCity[] = [];
  if (!fs.existsSync(graphDir)) return { cities, failures };
  const files = fs
    .readdirSync(graphDir)
    .filter((f) => f.endsWith('.qwg') && (!only || only.includes(f.slice(0, -'.qwg'.length))))
    .sort();
  for (const file of files) {
    const full = path.join(graphDir, file);
    const weightingFile = full.replace(/\.qwg$/, '.weighting.json');
    try {
      const weighting = fs.existsSync(weightingFile) ? fs.readFileSync(weightingFile, 'utf8') : undefined;
      const engine = await addon.loadCity(full, weighting);
      const s = engine.stats();
      const coverage = (JSON.parse(s.coverageJson) as [number, number][][][][]).map((polygons, i) =>
        area(s.id, s.areaNames[i] ?? s.name, polygons),
      );
      cities.push({
        id: s.id,
        name: s.name,
        timezone: s.timezone,
        graphVersion: s.graphVersion,
        hasLightingData: s.hasLightingData,
        coverage,
        dataBbox: s.bbox as [number, number, number, number],
        // Stored beside the graph at build; measured here (and stored) for a graph built without it.
        dataCoverage: await dataCoverageOf(full, engine, coverage).catch(() => null),
        engine,
      });
    } catch (err) {
      failures.push({ id: file.replace(/\.qwg$/, ''), file: full, error: (err as Error).message });
    }
  }
  return { cities, failures };
}

export default fp(
  async (app: FastifyInstance, opts: { config: Config }) => {
    const addon = native();
    const only = opts.config.cities;
    const { cities, failures } = await loadGraphs(opts.config.graphDir, only);
    if (only) {
      const missing = only.filter((id) => !fs.existsSync(path.join(opts.config.graphDir, `${id}.qwg`)));
      if (missing.length > 0) {
        app.log.error({ cities: missing }, 'QUIETWAY_CITIES names cities without a graph file');
      }
      app.log.info({ cities: only }, 'loading only the cities of QUIETWAY_CITIES');
    }
    for (const f of failures) app.log.error({ file: f.file }, `city graph not loaded: ${f.error}`);
    for (const c of cities) {
      app.log.info(
        {
          city: c.id,
          graphVersion: c.graphVersion,
          dataBbox: c.dataBbox,
          polygonShare: c.dataCoverage?.polygon_share ?? null,
        },
        `loaded ${c.name}`,
      );
    }
    if (cities.length === 0) {
      app.log.warn(
        { graphDir: opts.config.graphDir },
        'no city graph loaded: routing answers 503 until one is built (quietway build-graph)',
      );
    }
    const byId = new Map(cities.map((c) => [c.id, c]));
    app.decorate('engine', {
      version: addon.engineVersion(),
      configured: configuredCities(opts.config.sharedDataDir),
      failed: failures,
      snapRadiusM: opts.config.snapRadiusM,
      log: app.log,
      cities: () => [...byId.values()],
      city: (id: string) => byId.get(id),
    });
  },
  { name: 'engine' },
);
