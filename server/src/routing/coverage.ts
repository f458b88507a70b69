// Which city a set of waypoints lies in. Loaded cities carry their coverage polygons in the graph;
// configured cities whose graph is not loaded are known from the city list and their boundary
// files, so a request there answers 503 (routing outage) rather than "outside coverage".
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config.js';

type Ring = [number, number][];
type Polygon = Ring[];

export interface CoverageArea {
  id: string;
  name: string;
  polygons: Polygon[];
  bbox: [number, number, number, number];
  /** Edges by horizontal band of the bbox: a point's crossing test reads only its band's edges. */
  bands: Float64Array[];
}

const BANDS = 512;

function bboxOf(polygons: Polygon[]): [number, number, number, number] {
  let [minX, minY, maxX, maxY] = [180, 90, -180, -90];
  for (const poly of polygons)
    for (const ring of poly)
      for (const [x, y] of ring) {
        minX = Math.min(minX, x);
        minY = Math.min(minY, y);
        maxX = Math.max(maxX, x);
        maxY = Math.max(maxY, y);
      }
  return [minX, minY, maxX, maxY];
}

export function area(id: string, name: string, polygons: Polygon[]): CoverageArea {
  const bbox = bboxOf(polygons);
  const [, minY, , maxY] = bbox;
  const h = (maxY - minY) / BANDS || 1;
  const lists: number[][] = Array.from({ length: BANDS }, () => []);
  for (const poly of polygons)
    for (const ring of poly)
      for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
        const [xi, yi] = ring[i] as [number, number];
        const [xj, yj] = ring[j] as [number, number];
        const lo = Math.max(0, Math.floor((Math.min(yi, yj) - minY) / h));
        const hi = Math.min(BANDS - 1, Math.floor((Math.max(yi, yj) - minY) / h));
        for (let b = lo; b <= hi; b++) (lists[b] as number[]).push(xi, yi, xj, yj);
      }
  return { id, name, polygons, bbox, bands: lists.map((l) => Float64Array.from(l)) };
}

/** Even-odd rule over every ring (holes fall out naturally), on the point's band of edges. */
export function contains(a: CoverageArea, [x, y]: [number, number]): boolean {
  const [minX, minY, maxX, maxY] = a.bbox;
  if (x < minX || x > maxX || y < minY || y > maxY) return false;
  const h = (maxY - minY) / BANDS || 1;
  const band = a.bands[Math.min(BANDS - 1, Math.floor((y - minY) / h))] as Float64Array;
  let inside = false;
  for (let k = 0; k < band.length; k += 4) {
    const xi = band[k] as number;
    const yi = band[k + 1] as number;
    const xj = band[k + 2] as number;
    const yj = band[k + 3] as number;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * Whether the point lies inside the area or within `marginM` metres of its boundary. Boundary files
 * clipped to the shoreline leave piers and waterfront paths just outside; routing accepts them.
 */
export function containsWithin(a: CoverageArea, p: [number, number], marginM: number): boolean {
  if (contains(a, p)) return true;
  if (marginM <= 0) return false;
  const [x, y] = p;
  const [minX, minY, maxX, maxY] = a.bbox;
  const kx = 111_320 * Math.cos((y * Math.PI) / 180);
  const ky = 110_540;
  const dy = marginM / ky;
  const dx = marginM / Math.max(kx, 1);
  if (x < minX - dx || x > maxX + dx || y < minY - dy || y > maxY + dy) return false;
  const h = (maxY - minY) / BANDS || 1;
  const lo = Math.max(0, Math.floor((y - dy - minY) / h));
  const hi = Math.min(BANDS - 1, Math.floor((y + dy - minY) / h));
  const m2 = marginM * marginM;
  for (let b = lo; b <= hi; b++) {
    const band = a.bands[b] as Float64Array;
    for (let k = 0; k < band.length; k += 4) {
      // The point's distance to the edge, in metres on a local plane.
      const ax = ((band[k] as number) - x) * kx;
      const ay = ((band[k + 1] as number) - y) * ky;
      const bx = ((band[k + 2] as number) - x) * kx;
      const by = ((band[k + 3] as number) - y) * ky;
      const ex = bx - ax;
      const ey = by - ay;
      const len2 = ex * ex + ey * ey;
      const t = len2 > 0 ? Math.min(1, Math.max(0, -(ax * ex + ay * ey) / len2)) : 0;
      const cx = ax + t * ex;
      const cy = ay + t * ey;
      if (cx * cx + cy * cy <= m2) return true;
    }
  }
  return false;
}

/** Polygons of a GeoJSON FeatureCollection, Feature or geometry (Polygon / MultiPolygon). */
export function geojsonPolygons(json: unknown): Polygon[] {
  const out: Polygon[] = [];
  const visit = (g: { type?: string; coordinates?: unknown; features?: unknown[]; geometry?: unknown }) => {
    if (!g) return;
    if (g.type === 'FeatureCollection') for (const f of g.features ?? []) visit(f as typeof g);
    else if (g.type === 'Feature') visit(g.geometry as typeof g);
    else if (g.type === 'Polygon') out.push(g.coordinates as Polygon);
    else if (g.type === 'MultiPolygon') out.push(...(g.coordinates as Polygon[]));
  };
  visit(json as Parameters<typeof visit>[0]);
  return out;
}

/** A spec city as graph-pipeline/cities.json configures it (the file the pipeline embeds). */
export interface CityListing {
  name: string;
  /** IANA time zone (the graph's own once it is loaded). */
  timezone?: string;
  /** The coverage polygons, relative to the shared data folder. */
  boundary?: string;
  /** Extracts in the shared data folder built when a self-hoster brings none. */
  sample_extracts?: string[];
}

/** The configured cities by id, in the order of graph-pipeline/cities.json. */
export function cityList(): Record<string, CityListing> {
  const file = path.join(PROJECT_ROOT, 'graph-pipeline', 'cities.json');
  if (!fs.existsSync(file)) return {};
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, CityListing>;
}

/** Configured cities (graph-pipeline/cities.json) with their boundaries from the shared data. */
export function configuredCities(sharedDataDir: string): CoverageArea[] {
  const out: CoverageArea[] = [];
  for (const [id, c] of Object.entries(cityList())) {
    if (!c.boundary) continue;
    const b = path.join(sharedDataDir, c.boundary);
    if (!fs.existsSync(b)) continue;
    try {
      out.push(area(id, c.name, geojsonPolygons(JSON.parse(fs.readFileSync(b, 'utf8')))));
    } catch {
      // An unreadable boundary only costs the 503-versus-400 distinction for that city.
    }
  }
  return out;
}
