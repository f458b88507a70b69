// Where a personal bike can be left at the destination (multi-modal `parking_type`):
// - `regular`: racks and stands: the city's official rack data (Chicago's rack table, DataSF's
//   bicycle parking) and the OSM bicycle parking the city's place index holds;
// - `ebike`: designated rental e-bike bays, only in areas (London boroughs) that mandate them, each
//   bay optionally tied to an operator (`lime`, `forest`) that serves a list of areas.
// Spots are read once at start-up from the files configured per city (QUIETWAY_PARKING), with the
// shared data's rack files as defaults.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { FastifyBaseLogger } from 'fastify';
import type { LoadedCity } from '../plugins/engine.js';
import { contains } from '../routing/coverage.js';

export interface ParkingSpot {
  kind: 'regular' | 'ebike';
  name: string;
  location: [number, number];
  /** Spaces or racks when the source says. */
  capacity: number | null;
  /** `osm`, a file name, … */
  source: string;
  /** E-bike bays: the operator whose bay it is (any operator when null). */
  operator: string | null;
  /** The coverage area (borough) the spot lies in. */
  area: string | null;
}

export interface CityParkingConfig {
  /** Rack files: CSV with latitude/longitude columns, DataSF JSON, or GeoJSON points. */
  regular?: string[];
  /** E-bike bay files (GeoJSON points; `operator` and `name` properties are read). */
  ebike_bays?: string[];
  /** Areas (boroughs) where e-bikes must be left in a bay; elsewhere they may be parked anywhere. */
  ebike_bay_areas?: string[];
  /** The areas each e-bike operator serves. */
  ebike_operators?: Record<string, string[]>;
}

export type ParkingConfig = Record<string, CityParkingConfig>;

/** Rack files of the shared data, used when a city has no parking configuration of its own. */
export const DEFAULT_PARKING: ParkingConfig = {
  chicago: { regular: ['cycling/chicago-bike-racks.csv'] },
  'sf-bay-area': { regular: ['cycling/sf-bike-parking.json'] },
};

type Row = Record<string, unknown>;

const numberOf = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** Reads one parking file into spots (without area). */
export function readParkingFile(file: string, kind: ParkingSpot['kind']): ParkingSpot[] {
  const text = fs.readFileSync(file, 'utf8');
  const source = path.basename(file);
  const out: ParkingSpot[] = [];
  const push = (
    lon: number | null,
    lat: number | null,
    name: unknown,
    capacity: unknown,
    operator: unknown,
  ) => {
    if (lon === null || lat === null || Math.abs(lon) > 180 || Math.abs(lat) > 90) return;
    out.push({
      kind,
      name: typeof name === 'string' && name ? name : kind === 'ebike' ? 'E-bike bay' : 'Bike parking',
      location: [lon, lat],
      capacity: numberOf(capacity),
      source,
      operator: typeof operator === 'string' ? operator.toLowerCase() : null,
      area: null,
    });
  };
  if (file.endsWith('.csv')) {
    const rows = parse(text, { columns: true, skip_empty_lines: true, bom: true }) as Row[];
    for (const r of rows) {
      const get = (re: RegExp) => {
        const k = Object.keys(r).find((x) => re.test(x));
        return k === undefined ? undefined : r[k];
      };
      push(
        numberOf(get(/^(longitude|lon|lng)$/i)),
        numberOf(get(/^(latitude|lat)$/i)),
        get(/^(address|name)$/i),
        get(/^(totinstall|capacity|spaces)$/i),
        get(/^operator$/i),
      );
    }
    return out;
  }
  const json = JSON.parse(text) as unknown;
  if (Array.isArray(json)) {
    // DataSF bicycle parking: {ADDRESS, RACKS, SPACES, COORDINATES: [lon, lat]}
    for (const r of json as Row[]) {
      const c = Array.isArray(r.COORDINATES) ? r.COORDINATES : null;
      push(numberOf(c?.[0]), numberOf(c?.[1]), r.ADDRESS ?? r.name, r.SPACES ?? r.capacity, r.operator);
    }
    return out;
  }
  const features = (json as { features?: unknown }).features;
  if (Array.isArray(features)) {
    for (const f of features as { geometry?: { type?: string; coordinates?: unknown }; properties?: Row }[]) {
      if (f.geometry?.type !== 'Point' || !Array.isArray(f.geometry.coordinates)) continue;
      const p = f.properties ?? {};
      const [lon, lat] = f.geometry.coordinates as unknown[];
      push(numberOf(lon), numberOf(lat), p.name, p.capacity, p.operator);
    }
  }
  return out;
}

/** OSM bicycle parking from the city's place index (`<graphs>/<city>.places.ndjson`). */
function osmParking(graphDir: string, cityId: string): ParkingSpot[] {
  const file = path.join(graphDir, `${cityId}.places.ndjson`);
  if (!fs.existsSync(file)) return [];
  const out: ParkingSpot[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('amenity=bicycle_parking')) continue;
    try {
      const p = JSON.parse(line) as { name?: string; lon: number; lat: number; category?: string };
      if (p.category !== 'amenity=bicycle_parking') continue;
      out.push({
        kind: 'regular',
        name: p.name || 'Bike parking',
        location: [p.lon, p.lat],
        capacity: null,
        source: 'osm',
        operator: null,
        area: null,
      });
    } catch {}
  }
  return out;
}

export interface CityParking {
  regular: ParkingSpot[];
  ebike: ParkingSpot[];
  bayAreas: Set<string>;
  operators: Map<string, Set<string>>;
}

export class ParkingService {
  private readonly byCity = new Map<string, CityParking>();

  constructor(
    private readonly config: ParkingConfig,
    private readonly sharedDataDir: string,
    private readonly graphDir: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The city's spots, read on first use (the files are small; the city's areas come from its graph). */
  forCity(city: LoadedCity): CityParking {
    let p = this.byCity.get(city.id);
    if (p) return p;
    const c = this.config[city.id] ?? DEFAULT_PARKING[city.id] ?? {};
    const read = (files: string[] | undefined, kind: ParkingSpot['kind']) =>
      (files ?? []).flatMap((f) => {
        const full = path.resolve(this.sharedDataDir, f);
        try {
          return readParkingFile(full, kind);
        } catch (err) {
          this.log.warn({ file: full }, `parking data not read: ${(err as Error).message}`);
          return [];
        }
      });
    const areaOf = (s: ParkingSpot) => {
      s.area = city.coverage.find((a) => contains(a, s.location))?.name ?? null;
      return s;
    };
    p = {
      regular: [...read(c.regular, 'regular'), ...osmParking(this.graphDir, city.id)].map(areaOf),
      ebike: read(c.ebike_bays, 'ebike').map(areaOf),
      bayAreas: new Set(c.ebike_bay_areas ?? []),
      operators: new Map(
        Object.entries(c.ebike_operators ?? {}).map(([k, v]) => [k.toLowerCase(), new Set(v)]),
      ),
    };
    this.byCity.set(city.id, p);
    return p;
  }
}
