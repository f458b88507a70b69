// The routing engine as an application service: the native addon plus the city graphs it has
// loaded from the graph directory (`<data>/graphs/<city>.qwg`, with an optional
// `<city>.weighting.json` beside it). A graph that fails to load is logged and skipped; the server
// still starts and `/health/` shows what is loaded.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Engine } from '../../../addon/index.js';
import type { Config } from '../config.js';
import { native } from '../native.js';
import { area, type CoverageArea, configuredCities } from '../routing/coverage.js';

export interface LoadedCity {
  id: string;
  name: string;
  timezone: string;
  graphVersion: string;
  hasLightingData: boolean;
  /** The city's coverage areas (from its configured boundary, stored in the graph). */
  coverage: CoverageArea[];
  engine: Engine;
}

export interface EngineService {
  version: string;
  /** Every configured city's coverage, loaded or not (to tell an outage from outside coverage). */
  configured: CoverageArea[];
  cities(): LoadedCity[];
  city(id: string): LoadedCity | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    engine: EngineService;
  }
}

/** Loads every graph in a directory; returns the cities and the files that failed, with why. */
export async function loadGraphs(
  graphDir: string,
): Promise<{ cities: LoadedCity[]; failures: { file: string; error: string }[] }> {
  const addon = native();
  const cities: LoadedCity[] = [];
  const failures: { file: string; error: string }[] = [];
  if (!fs.existsSync(graphDir)) return { cities, failures };
  const files = fs
    .readdirSync(graphDir)
    .filter((f) => f.endsWith('.qwg'))
    .sort();
  for (const file of files) {
    const full = path.join(graphDir, file);
    const weightingFile = full.replace(/\.qwg$/, '.weighting.json');
    try {
      const weighting = fs.existsSync(weightingFile) ? fs.readFileSync(weightingFile, 'utf8') : undefined;
      const engine = await addon.loadCity(full, weighting);
      const s = engine.stats();
      cities.push({
        id: s.id,
        name: s.name,
        timezone: s.timezone,
        graphVersion: s.graphVersion,
        hasLightingData: s.hasLightingData,
        coverage: (JSON.parse(s.coverageJson) as [number, number][][][][]).map((polygons, i) =>
          area(s.id, s.areaNames[i] ?? s.name, polygons),
        ),
        engine,
      });
    } catch (err) {
      failures.push({ file: full, error: (err as Error).message });
    }
  }
  return { cities, failures };
}

export default fp(
  async (app: FastifyInstance, opts: { config: Config }) => {
    const addon = native();
    const { cities, failures } = await loadGraphs(opts.config.graphDir);
    for (const f of failures) app.log.error({ file: f.file }, `city graph not loaded: ${f.error}`);
    for (const c of cities) {
      app.log.info({ city: c.id, graphVersion: c.graphVersion }, `loaded ${c.name}`);
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
      cities: () => [...byId.values()],
      city: (id: string) => byId.get(id),
    });
  },
  { name: 'engine' },
);
