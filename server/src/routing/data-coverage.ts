// How much of a city's coverage polygon its graph's data covers. The polygon is cut into cells of
// about 250 m; a cell counts when its centre lies inside the polygon, and is covered when a road of
// the graph passes through it. Measured once per graph (at build, or at the first load of a graph
// built without it) and stored beside the graph as `<city>.coverage.json`, keyed by graph version.
import fs from 'node:fs';
import type { Engine } from '../../../addon/index.js';
import { type CoverageArea, contains } from './coverage.js';

/** Side of a cell, metres. */
export const CELL_M = 250;
const M_PER_DEG_LAT = 111_320;
/** Side of the tiles the roads are read in, degrees (about 2 km). */
const TILE_DEG = 0.02;

export interface DataCoverage {
  graph_version: string;
  /** `[min lon, min lat, max lon, max lat]` of the graph's junctions. */
  data_bbox: [number, number, number, number];
  cell_m: number;
  /** Cells whose centre lies inside the city's polygon. */
  polygon_cells: number;
  /** Of those, the cells a road of the graph passes through. */
  covered_cells: number;
  /** covered / polygon cells, rounded to 0.01 %. */
  polygon_share: number;
}

/** A grid of ~CELL_M cells over a bbox (degrees per cell in longitude shrink with latitude). */
function grid(bbox: [number, number, number, number]) {
  const [minX, minY, maxX, maxY] = bbox;
  const dy = CELL_M / M_PER_DEG_LAT;
  const dx = CELL_M / (M_PER_DEG_LAT * Math.cos((((minY + maxY) / 2) * Math.PI) / 180));
  const cols = Math.max(1, Math.ceil((maxX - minX) / dx));
  const rows = Math.max(1, Math.ceil((maxY - minY) / dy));
  const cellOf = (x: number, y: number): number => {
    const c = Math.floor((x - minX) / dx);
    const r = Math.floor((y - minY) / dy);
    return c < 0 || r < 0 || c >= cols || r >= rows ? -1 : r * cols + c;
  };
  const centre = (cell: number): [number, number] => [
    minX + ((cell % cols) + 0.5) * dx,
    minY + (Math.floor(cell / cols) + 0.5) * dy,
  ];
  return { cols, rows, cellOf, centre, dx, dy };
}

/** Measures a loaded graph against its city's coverage areas (reads every road of the graph once). */
export async function measureDataCoverage(engine: Engine, areas: CoverageArea[]): Promise<DataCoverage> {
  const stats = engine.stats();
  const dataBbox = stats.bbox as [number, number, number, number];
  const polygonBbox: [number, number, number, number] = [180, 90, -180, -90];
  for (const a of areas) {
    polygonBbox[0] = Math.min(polygonBbox[0], a.bbox[0]);
    polygonBbox[1] = Math.min(polygonBbox[1], a.bbox[1]);
    polygonBbox[2] = Math.max(polygonBbox[2], a.bbox[2]);
    polygonBbox[3] = Math.max(polygonBbox[3], a.bbox[3]);
  }
  const g = grid(polygonBbox);
  const covered = new Uint8Array(g.cols * g.rows);
  // Every vertex of every road, with points added along segments longer than half a cell so a
  // long straight road (a bridge) marks each cell it crosses. Read tile by tile, so a whole city's
  // roads are never all in memory at once (a road meeting two tiles is marked twice, harmlessly).
  const mark = (geo: Float64Array) => {
    for (let i = 0; i + 1 < geo.length; i += 2) {
      const x = geo[i] as number;
      const y = geo[i + 1] as number;
      let cell = g.cellOf(x, y);
      if (cell >= 0) covered[cell] = 1;
      if (i + 3 < geo.length) {
        const nx = geo[i + 2] as number;
        const ny = geo[i + 3] as number;
        const steps = Math.ceil(Math.max(Math.abs(nx - x) / g.dx, Math.abs(ny - y) / g.dy) * 2);
        for (let s = 1; s < steps; s++) {
          cell = g.cellOf(x + ((nx - x) * s) / steps, y + ((ny - y) * s) / steps);
          if (cell >= 0) covered[cell] = 1;
        }
      }
    }
  };
  const [minX, minY, maxX, maxY] = dataBbox;
  for (let tx = minX; tx <= maxX; tx += TILE_DEG) {
    for (let ty = minY; ty <= maxY; ty += TILE_DEG) {
      const tile = [tx, ty, Math.min(tx + TILE_DEG, maxX), Math.min(ty + TILE_DEG, maxY)];
      for (const road of await engine.roads(tile, 0x7fffffff)) mark(road.geometry);
    }
  }
  let inside = 0;
  let hit = 0;
  for (let cell = 0; cell < covered.length; cell++) {
    const c = g.centre(cell);
    if (!areas.some((a) => contains(a, c))) continue;
    inside += 1;
    hit += covered[cell] as number;
  }
  return {
    graph_version: stats.graphVersion,
    data_bbox: dataBbox,
    cell_m: CELL_M,
    polygon_cells: inside,
    covered_cells: hit,
    polygon_share: inside > 0 ? Math.round((hit / inside) * 10_000) / 10_000 : 0,
  };
}

/** The coverage file beside a graph file. */
export const coverageFileOf = (graphFile: string) => graphFile.replace(/\.qwg$/, '.coverage.json');

/** The stored measure for this graph version, if one was written. */
export function readDataCoverage(graphFile: string, graphVersion: string): DataCoverage | null {
  try {
    const stored = JSON.parse(fs.readFileSync(coverageFileOf(graphFile), 'utf8')) as DataCoverage;
    return stored.graph_version === graphVersion ? stored : null;
  } catch {
    return null;
  }
}

/** Stores the measure beside the graph; a read-only graph folder only costs measuring again. */
export function writeDataCoverage(graphFile: string, coverage: DataCoverage): boolean {
  try {
    fs.writeFileSync(coverageFileOf(graphFile), `${JSON.stringify(coverage, null, 2)}\n`);
    return true;
  } catch {
    return false;
  }
}

/** The stored measure, else measured now and stored. */
export async function dataCoverageOf(
  graphFile: string,
  engine: Engine,
  areas: CoverageArea[],
): Promise<DataCoverage> {
  const stored = readDataCoverage(graphFile, engine.stats().graphVersion);
  if (stored) return stored;
  const measured = await measureDataCoverage(engine, areas);
  writeDataCoverage(graphFile, measured);
  return measured;
}
