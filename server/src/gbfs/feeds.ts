// Reading GBFS feeds (1.1 to 3.0) into one normalized shape. Versions differ in names (free_bike_status
// → vehicle_status, num_bikes_available → num_vehicles_available), in types (0/1 → booleans) and in
// localized strings (3.0 names are `[{text, language}]`); a feed item that cannot be read is skipped,
// never the whole feed.

export type Propulsion = 'human' | 'electric_assist' | 'electric' | 'combustion' | string;

export interface VehicleType {
  id: string;
  formFactor: string;
  propulsion: Propulsion;
  maxRangeMeters: number | null;
  pricingPlanId: string | null;
  name: string | null;
}

export interface Station {
  id: string;
  name: string;
  lon: number;
  lat: number;
  capacity: number | null;
  /** Deep links into the operator's app (station or vehicle), when published. */
  rentalUris: RentalUris | null;
}

export interface RentalUris {
  android: string | null;
  ios: string | null;
}

const rentalUris = (v: unknown): RentalUris | null =>
  isObj(v) && (typeof v.android === 'string' || typeof v.ios === 'string')
    ? { android: str(v.android), ios: str(v.ios) }
    : null;

export interface StationStatus {
  /** Bicycles for rent (scooters and other form factors left out when the types say so). */
  bikes: number;
  /** E-bikes among `bikes`, when the system publishes it (`null` otherwise). */
  ebikes: number | null;
  docks: number | null;
  renting: boolean;
  returning: boolean;
}

export interface Vehicle {
  id: string;
  lon: number;
  lat: number;
  typeId: string | null;
  /** Electric by its vehicle type (or a pre-standard `type: electric_bike`). */
  electric: boolean;
  currentRangeMeters: number | null;
  formFactor: string;
  rentalUris: RentalUris | null;
}

export interface PricingSegment {
  start: number;
  rate: number;
  interval: number;
  end: number | null;
}

export interface PricingPlan {
  id: string;
  name: string;
  currency: string;
  price: number;
  description: string;
  perMin: PricingSegment[];
  perKm: PricingSegment[];
}

export interface SystemInformation {
  name: string | null;
  android: string | null;
  ios: string | null;
  logo: string | null;
}

/** A rule of a geofencing zone, for the vehicle types it names (all when `typeIds` is null). */
export interface ZoneRule {
  typeIds: string[] | null;
  /** A ride may start here. */
  start: boolean;
  /** A ride may end here. */
  end: boolean;
  /** A ride may pass through. */
  through: boolean;
}

export interface GeofencingZone {
  name: string;
  polygons: [number, number][][][];
  rules: ZoneRule[];
}

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};
const str = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
const bool = (v: unknown, fallback: boolean): boolean =>
  v === true || v === 1 || v === '1' || v === 'true'
    ? true
    : v === false || v === 0 || v === '0' || v === 'false'
      ? false
      : fallback;

/** A GBFS 3.0 localized string (`[{text, language}]`, English preferred) or a plain string. */
export function text(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const items = v.filter(isObj);
    const en = items.find((i) => typeof i.language === 'string' && i.language.startsWith('en')) ?? items[0];
    return en ? str(en.text) : null;
  }
  return null;
}

/** The feed's `data` object; throws when the body is not a GBFS feed. */
export function dataOf(body: unknown): Json {
  if (!isObj(body) || !isObj(body.data)) throw new Error('not a GBFS feed (no data object)');
  return body.data;
}

/** Seconds the feed says it stays fresh. */
export function ttlOf(body: unknown): number | null {
  return isObj(body) ? num(body.ttl) : null;
}

export function lastUpdatedOf(body: unknown): number | null {
  if (!isObj(body)) return null;
  const v = body.last_updated;
  if (typeof v === 'string') {
    const t = Date.parse(v); // GBFS 3.0: an RFC 3339 timestamp
    return Number.isNaN(t) ? null : Math.floor(t / 1000);
  }
  return num(v);
}

export interface Discovery {
  version: string;
  feeds: Map<string, string>;
}

/**
 * The feeds a discovery file lists. 1.x/2.x: `data.<language>.feeds` (English, else the first
 * language); 3.0: `data.feeds`.
 */
export function readDiscovery(body: unknown): Discovery {
  const data = dataOf(body);
  const version = (isObj(body) && str(body.version)) || '1.0';
  let list: unknown = data.feeds;
  if (!Array.isArray(list)) {
    const langs = Object.keys(data);
    const lang = langs.find((l) => l === 'en') ?? langs.find((l) => l.startsWith('en')) ?? langs[0];
    const entry = lang ? data[lang] : undefined;
    list = isObj(entry) ? entry.feeds : undefined;
  }
  if (!Array.isArray(list)) throw new Error('the discovery file lists no feeds');
  const feeds = new Map<string, string>();
  for (const f of list) {
    if (isObj(f) && typeof f.name === 'string' && typeof f.url === 'string') feeds.set(f.name, f.url);
  }
  return { version, feeds };
}

/**
 * A GBFS 3.0 manifest (`data.datasets`) names each system's discovery files by version: the URL of
 * `systemId`'s newest (or the only system's), or `null` when the body is not a manifest.
 */
export function manifestUrl(body: unknown, systemId: string | undefined): string | null {
  if (!isObj(body) || !isObj(body.data) || !Array.isArray(body.data.datasets)) return null;
  const sets = body.data.datasets.filter(isObj);
  const set = systemId ? sets.find((s) => s.system_id === systemId) : sets.length === 1 ? sets[0] : undefined;
  if (!set || !Array.isArray(set.versions))
    throw new Error(`the manifest has no system ${systemId ?? ''}`.trim());
  const versions = set.versions
    .filter(isObj)
    .map((v) => ({ version: str(v.version) ?? '0', url: str(v.url) }))
    .filter((v): v is { version: string; url: string } => v.url !== null)
    .sort((a, b) => compareVersions(b.version, a.version));
  const best = versions[0];
  if (!best) throw new Error('the manifest lists no discovery file');
  return best.url;
}

const compareVersions = (a: string, b: string) => {
  const pa = a.replace(/^v/, '').split('.').map(Number);
  const pb = b.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
};

export function readVehicleTypes(body: unknown): Map<string, VehicleType> {
  const out = new Map<string, VehicleType>();
  const list = dataOf(body).vehicle_types;
  if (!Array.isArray(list)) return out;
  for (const t of list) {
    if (!isObj(t)) continue;
    const id = str(t.vehicle_type_id);
    if (!id) continue;
    out.set(id, {
      id,
      formFactor: str(t.form_factor) ?? 'bicycle',
      propulsion: str(t.propulsion_type) ?? 'human',
      maxRangeMeters: num(t.max_range_meters),
      pricingPlanId: str(t.default_pricing_plan_id) ?? null,
      name: text(t.name),
    });
  }
  return out;
}

export const isElectric = (p: Propulsion) => p !== 'human';

export function readStations(body: unknown): Map<string, Station> {
  const out = new Map<string, Station>();
  const list = dataOf(body).stations;
  if (!Array.isArray(list)) throw new Error('station_information has no stations');
  for (const s of list) {
    if (!isObj(s)) continue;
    const id = str(s.station_id);
    const lon = num(s.lon);
    const lat = num(s.lat);
    if (!id || lon === null || lat === null) continue;
    out.set(id, {
      id,
      name: text(s.name) ?? id,
      lon,
      lat,
      capacity: num(s.capacity),
      rentalUris: rentalUris(s.rental_uris),
    });
  }
  return out;
}

export function readStationStatus(
  body: unknown,
  types: Map<string, VehicleType>,
): Map<string, StationStatus> {
  const out = new Map<string, StationStatus>();
  const list = dataOf(body).stations;
  if (!Array.isArray(list)) throw new Error('station_status has no stations');
  for (const s of list) {
    if (!isObj(s)) continue;
    const id = str(s.station_id);
    if (!id) continue;
    const installed = bool(s.is_installed, true);
    let bikes = num(s.num_vehicles_available) ?? num(s.num_bikes_available) ?? 0;
    // Per vehicle type (2.1+ and 3.0) when the types are known: bicycles only, e-bikes among them;
    // else Lyft's num_ebikes_available.
    let ebikes: number | null = null;
    if (Array.isArray(s.vehicle_types_available) && types.size > 0) {
      ebikes = 0;
      bikes = 0;
      for (const v of s.vehicle_types_available) {
        if (!isObj(v)) continue;
        const t = types.get(str(v.vehicle_type_id) ?? '');
        if (t?.formFactor !== 'bicycle') continue;
        const count = num(v.count) ?? 0;
        bikes += count;
        if (isElectric(t.propulsion)) ebikes += count;
      }
    } else if (s.num_ebikes_available !== undefined) {
      ebikes = num(s.num_ebikes_available);
    }
    out.set(id, {
      bikes,
      ebikes,
      docks: num(s.num_docks_available),
      renting: installed && bool(s.is_renting, true),
      returning: installed && bool(s.is_returning, true),
    });
  }
  return out;
}

/** Free-floating vehicles that can be rented now (not reserved, not disabled). */
export function readVehicles(body: unknown, types: Map<string, VehicleType>): Vehicle[] {
  const data = dataOf(body);
  const list = Array.isArray(data.vehicles) ? data.vehicles : data.bikes;
  if (!Array.isArray(list)) throw new Error('the vehicle feed has no vehicles');
  const out: Vehicle[] = [];
  for (const v of list) {
    if (!isObj(v)) continue;
    const id = str(v.vehicle_id) ?? str(v.bike_id);
    const lon = num(v.lon);
    const lat = num(v.lat);
    if (!id || lon === null || lat === null) continue;
    if (bool(v.is_reserved, false) || bool(v.is_disabled, false)) continue;
    // A vehicle docked at a station (3.0 station_id) is rented as a docked bike.
    if (str(v.station_id)) continue;
    const typeId = str(v.vehicle_type_id);
    const type = typeId ? types.get(typeId) : undefined;
    const legacyType = str(v.type); // Bay Wheels' pre-standard `type: electric_bike`
    out.push({
      id,
      lon,
      lat,
      typeId,
      electric: type ? isElectric(type.propulsion) : (legacyType ?? '').includes('electric'),
      currentRangeMeters: num(v.current_range_meters),
      formFactor: type?.formFactor ?? 'bicycle',
      rentalUris: rentalUris(v.rental_uris),
    });
  }
  return out;
}

const segments = (v: unknown): PricingSegment[] =>
  Array.isArray(v)
    ? v.filter(isObj).map((s) => ({
        start: num(s.start) ?? 0,
        rate: num(s.rate) ?? 0,
        interval: num(s.interval) ?? 1,
        end: num(s.end),
      }))
    : [];

export function readPricingPlans(body: unknown): PricingPlan[] {
  const list = dataOf(body).plans;
  if (!Array.isArray(list)) return [];
  const out: PricingPlan[] = [];
  for (const p of list) {
    if (!isObj(p)) continue;
    const id = str(p.plan_id);
    if (!id) continue;
    out.push({
      id,
      name: text(p.name) ?? id,
      currency: str(p.currency) ?? '',
      price: num(p.price) ?? 0,
      description: text(p.description) ?? '',
      perMin: segments(p.per_min_pricing),
      perKm: segments(p.per_km_pricing),
    });
  }
  return out;
}

export function readSystemInformation(body: unknown): SystemInformation {
  const d = dataOf(body);
  const apps = isObj(d.rental_apps) ? d.rental_apps : {};
  const store = (k: string) => {
    const a = apps[k];
    return isObj(a) ? str(a.store_uri) : null;
  };
  const brand = isObj(d.brand_assets) ? str(d.brand_assets.brand_image_url) : null;
  return { name: text(d.name), android: store('android'), ios: store('ios'), logo: brand };
}

/** Geofencing zones (2.1+ and 3.0): a GeoJSON FeatureCollection of (Multi)Polygons with rules. */
export function readGeofencing(body: unknown): GeofencingZone[] {
  const d = dataOf(body);
  const fc = d.geofencing_zones;
  if (!isObj(fc) || !Array.isArray(fc.features)) return [];
  const out: GeofencingZone[] = [];
  for (const f of fc.features) {
    if (!isObj(f) || !isObj(f.geometry) || !isObj(f.properties)) continue;
    const g = f.geometry;
    const polygons =
      g.type === 'Polygon'
        ? [g.coordinates as [number, number][][]]
        : g.type === 'MultiPolygon'
          ? (g.coordinates as [number, number][][][])
          : null;
    if (!polygons || !Array.isArray(polygons)) continue;
    const rules: ZoneRule[] = [];
    for (const r of Array.isArray(f.properties.rules) ? f.properties.rules : []) {
      if (!isObj(r)) continue;
      // 2.x: ride_allowed covers starting and ending; 3.0: ride_start_allowed / ride_end_allowed.
      const allowed = bool(r.ride_allowed, true);
      rules.push({
        typeIds: Array.isArray(r.vehicle_type_ids)
          ? r.vehicle_type_ids.map(String)
          : Array.isArray(r.vehicle_type_id)
            ? r.vehicle_type_id.map(String)
            : null,
        start: bool(r.ride_start_allowed, allowed),
        end: bool(r.ride_end_allowed, allowed),
        through: bool(r.ride_through_allowed, true),
      });
    }
    if (rules.length > 0) out.push({ name: text(f.properties.name) ?? '', polygons, rules });
  }
  return out;
}
