// Planning a route for the API: which city, which regime (day or night), the departure's avoidance
// windows, the engine's route and guidance, the snap radius (routing/snapping.ts) and the
// disruptions near it. Shared by directions v2, the deprecated v1 and (later) multi-modal.
import type { RouteInput, RouteJsonOutput } from '../../../addon/index.js';
import type { Disruption, Repositories } from '../db/repositories.js';
import { cityLoading, HttpError } from '../errors.js';
import type { EngineService, LoadedCity } from '../plugins/engine.js';
import { contains, containsWithin } from './coverage.js';
import {
  checkSnapRadius,
  noRouteWaypoints,
  type SnappedPoint,
  type SnapRule,
  wouldSnap,
} from './snapping.js';
import { type Departure, departureIn, isNight, localDate, localMinutes } from './time.js';

export type Mode = 'cycling' | 'walking';

/** `[lon, lat]` pairs of a flat coordinate array from the engine. */
export function pairs(flat: Float64Array): number[][] {
  const out: number[][] = new Array(flat.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = [flat[2 * i] as number, flat[2 * i + 1] as number];
  return out;
}

export interface PlanRequest {
  coordinates: [number, number][];
  profile: Mode;
  supersafe: boolean;
  bearing?: number;
  departure_time?: string;
  nighttime?: boolean;
}

/** What a caller needs from the engine beyond the route object. */
export interface PlanExtras {
  /** The route's flat geometry (`output.geometry`). */
  geometry?: boolean;
  /** The directed arcs travelled (`output.arcIds`). */
  arcIds?: boolean;
}

export interface PlannedRoute {
  city: LoadedCity;
  nighttime: boolean;
  /**
   * The engine's answer: the v2 `route` object as JSON and what goes beside it; null when no route
   * exists, or a waypoint snapped beyond the snap radius.
   */
  output: RouteJsonOutput | null;
  /** The snapped waypoints: the route's, or where each point would have snapped (empty when one cannot). */
  waypoints: SnappedPoint[];
  /** Disruptions near a cycling route (absent when none apply, and on walking). */
  disruptions?: ApiDisruption[];
}

export const CROSS_CITY = 'CROSS_CITY_ROUTE';

/**
 * How far outside a city's coverage polygon a waypoint may lie and still be routed in that city:
 * the boundary files are clipped to the shoreline, which leaves piers and waterfront paths outside.
 */
export const COVERAGE_SHORE_MARGIN_M = 300;

/**
 * The loaded city that covers every waypoint; 400 CROSS_CITY_ROUTE or 503 otherwise (with
 * `Retry-After` when the city may be one whose graph is still loading).
 */
export function cityFor(engine: EngineService, points: [number, number][]): LoadedCity {
  for (const c of engine.cities()) {
    if (points.every((p) => c.coverage.some((a) => contains(a, p)))) return c;
  }
  // A point just off a boundary clipped to the shore (a pier, a waterfront path) still counts.
  for (const c of engine.cities()) {
    if (points.every((p) => c.coverage.some((a) => containsWithin(a, p, COVERAGE_SHORE_MARGIN_M)))) {
      return c;
    }
  }
  // Inside a configured city whose graph is not loaded: an outage, not a coverage problem; while
  // its graph is still loading (the server has just started), one that says when to try again.
  const known = engine.configured.find((a) => points.every((p) => contains(a, p)));
  if (known && !engine.city(known.id)) {
    throw (
      engine.loadingError(known.id) ??
      new HttpError(503, `Routing for ${known.name} is not available right now`)
    );
  }
  // A graph still loading whose coverage is not configured may hold the points.
  const loading = engine.loadingErrorAt(points);
  if (loading) throw loading;
  if (engine.cities().length === 0) {
    throw engine.loading().length > 0
      ? cityLoading(null)
      : new HttpError(503, 'Routing is not available right now');
  }
  const names = engine.cities().map((c) => c.name);
  throw new HttpError(
    400,
    `All waypoints must lie within one routed city; covered: ${names.join(', ')}`,
    undefined,
    { code: CROSS_CITY },
  );
}

/** A request resolved against its city, before routing. */
export interface Prepared {
  city: LoadedCity;
  /** The snap radius and where to note waypoints outside the city's data. */
  rule: SnapRule;
  departure: Departure;
  nighttime: boolean;
  /** The city's disruptions in force at the departure (cycling), not yet matched to the route. */
  candidates: ApiDisruption[];
  /** The engine's input. */
  input: RouteInput;
}

/** Which city, which regime (day or night), the departure and the disruptions in force. */
export function prepare(engine: EngineService, repos: Repositories, req: PlanRequest): Prepared {
  const city = cityFor(engine, req.coordinates);
  const cycling = req.profile === 'cycling';
  const departure = departureIn(cycling ? req.departure_time : undefined, city.timezone);
  const [lon, lat] = req.coordinates[0] as [number, number];
  // Night only where the city has lighting data; there the override forces either regime.
  const nighttime = cycling && city.hasLightingData && (req.nighttime ?? isNight(departure, lon, lat));
  return {
    city,
    rule: engine,
    departure,
    nighttime,
    candidates: cycling ? disruptionsInForce(repos, city.id, departure) : [],
    input: {
      coordinates: req.coordinates,
      profile: req.profile,
      supersafe: cycling ? req.supersafe : undefined,
      night: nighttime,
      bearing: cycling ? req.bearing : undefined,
      departureLocalMinutes: cycling ? localMinutes(departure) : undefined,
    },
  };
}

/** Plans a route: the route object, what `extras` asks for, and the disruptions near it. */
export function plan(
  engine: EngineService,
  repos: Repositories,
  req: PlanRequest,
  extras: PlanExtras = {},
): Promise<PlannedRoute> {
  return planPrepared(prepare(engine, repos, req), extras);
}

/** Routes a prepared request (see `plan`). */
export async function planPrepared(prepared: Prepared, extras: PlanExtras = {}): Promise<PlannedRoute> {
  const { city, rule, nighttime, candidates, input } = prepared;
  let output: RouteJsonOutput | null;
  try {
    output = await city.engine.routeJson({
      ...input,
      // The route's geometry is only fetched when a disruption could be near it.
      withGeometry: extras.geometry || candidates.length > 0,
      withArcIds: extras.arcIds,
    });
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  if (!output || !checkSnapRadius(rule.snapRadiusM, input.coordinates, output.waypoints).within) {
    const snapped = output?.waypoints ?? (await wouldSnap(city, input.coordinates, profileOf(input)));
    const waypoints = noRouteWaypoints(rule, city, input.coordinates, snapped);
    return { city, nighttime, output: null, waypoints };
  }
  const disruptions =
    output.geometry && candidates.length > 0 ? near(candidates, output.geometry) : undefined;
  const waypoints = output.waypoints.map((w) => ({ name: w.name, location: w.location }));
  return { city, nighttime, output, waypoints, disruptions };
}

const profileOf = (input: RouteInput) => (input.profile === 'walking' ? 'walking' : 'cycling');

const WAYPOINTS_KEY = Buffer.from('"waypoints":');

/**
 * Routes a prepared request into a whole directions v2 body written by the engine: the route
 * object and the waypoints, then `tail` (the remaining members and the closing brace). `body` is
 * null when no route exists or a waypoint snapped beyond the snap radius; `waypoints` are then the
 * ones to report.
 */
export async function respond(
  prepared: Prepared,
  tail: string,
): Promise<{ body: Buffer; waypoints?: undefined } | { body: null; waypoints: SnappedPoint[] }> {
  const { city, rule, input } = prepared;
  let body: Buffer | null;
  try {
    body = await city.engine.directionsResponse(input, tail);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  // The snapped waypoints are the member just before the tail (a name inside them is escaped, so
  // the last unescaped key is theirs).
  const end = body ? body.length - Buffer.byteLength(tail) : 0;
  const at = body ? body.lastIndexOf(WAYPOINTS_KEY, end) : -1;
  const snapped =
    body && at >= 0
      ? (JSON.parse(body.subarray(at + WAYPOINTS_KEY.length, end).toString('utf8')) as SnappedPoint[])
      : null;
  if (body && snapped && checkSnapRadius(rule.snapRadiusM, input.coordinates, snapped).within) {
    return { body };
  }
  const waypoints = noRouteWaypoints(
    rule,
    city,
    input.coordinates,
    snapped ?? (await wouldSnap(city, input.coordinates, profileOf(input))),
  );
  return { body: null, waypoints };
}

/** Metres from a point to a polyline (local equirectangular projection; fine at city scale). */
export function distanceToLine([x, y]: [number, number], line: number[][]): number {
  const k = Math.cos((y * Math.PI) / 180);
  const R = 6_371_008.8;
  const toXY = (p: number[]) => [
    (((p[0] as number) - x) * Math.PI * R * k) / 180,
    (((p[1] as number) - y) * Math.PI * R) / 180,
  ];
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 1 < line.length; i++) {
    const [ax, ay] = toXY(line[i] as number[]) as [number, number];
    const [bx, by] = toXY(line[i + 1] as number[]) as [number, number];
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 > 0 ? Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2)) : 0;
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

export interface ApiDisruption {
  id: string;
  source: string;
  status: 'active' | 'upcoming';
  name: string;
  notes: string;
  severity: 'avoid' | 'closed';
  location: [number, number];
  start_date: string;
  start_minute: number;
  end_date: string;
  end_minute: number;
}

/** Local minutes since 1970 of a city-local date and minute of day. */
export const minutesOf = (date: string, minute: number) =>
  Math.floor(Date.parse(`${date}T00:00:00Z`) / 60_000) + minute;

/** Disruptions active at the departure or starting within the next 60 minutes, with their status. */
function disruptionsInForce(repos: Repositories, cityId: string, departure: Departure): ApiDisruption[] {
  const now = localMinutes(departure);
  const out: ApiDisruption[] = [];
  for (const d of repos.disruptions.current(cityId, localDate(departure, -1))) {
    const start = minutesOf(d.startDate, d.startMinute);
    const end = minutesOf(d.endDate, d.endMinute);
    const active = start <= now && now < end;
    const upcoming = start > now && start <= now + 60;
    if (active || upcoming) out.push(view(d, active ? 'active' : 'upcoming'));
  }
  return out;
}

/**
 * The disruptions whose pin lies within about 150 m of a route's geometry (flat `[lon, lat, …]`);
 * `undefined` (the field is left out) when none does.
 */
function near(candidates: ApiDisruption[], flatGeometry: Float64Array): ApiDisruption[] | undefined {
  return nearAny(candidates, [flatGeometry]);
}

/** `near` over several cycling geometries (a multi-modal option's cycling legs). */
export function nearAny(
  candidates: ApiDisruption[],
  flatGeometries: Float64Array[],
): ApiDisruption[] | undefined {
  if (candidates.length === 0) return undefined;
  const geometries = flatGeometries.map(pairs);
  const out = candidates.filter((d) => geometries.some((g) => distanceToLine(d.location, g) <= 150));
  return out.length > 0 ? out : undefined;
}

const view = (d: Disruption, status: 'active' | 'upcoming'): ApiDisruption => ({
  id: d.id,
  source: d.source,
  status,
  name: d.name,
  notes: d.notes,
  severity: d.severity,
  location: d.location,
  start_date: d.startDate,
  start_minute: d.startMinute,
  end_date: d.endDate,
  end_minute: d.endMinute,
});
