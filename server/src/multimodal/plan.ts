// Multi-modal trips (interface spec "Multi-modal option"): the personal bike (SuperSafe and Direct,
// collapsed when identical; the Night fan-out after dark), then per bike-share system serving the city
// a docked option, a docked e-bike option and a dockless option. Stations and vehicles are chosen by
// walking cost on the network (the engine's one-to-many search) among those within 1,500 m; an option
// more than 3 × slower than the personal bike is dropped; no ride starts, ends or passes where the
// operator's geofencing forbids it. Legs are the engine's directions v2 route objects, spliced into
// the response as written (no re-serialization), with the spec's labels.
import type { RouteInput, RouteJsonOutput } from '../../../addon/index.js';
import type { Repositories } from '../db/repositories.js';
import { HttpError } from '../errors.js';
import type { GbfsSystem, LiveStation } from '../gbfs/client.js';
import type { RentalUris, Vehicle } from '../gbfs/feeds.js';
import type { EngineService, LoadedCity } from '../plugins/engine.js';
import { contains } from '../routing/coverage.js';
import { type ApiDisruption, nearAny, type Prepared, prepare } from '../routing/directions.js';
import { checkSnapRadius, noRouteWaypoints, type SnapRule } from '../routing/snapping.js';
import { isNight } from '../routing/time.js';
import { Geofence } from './geofence.js';
import type { ParkingService, ParkingSpot } from './parking.js';
import { type ApiRental, rental } from './pricing.js';

/** Spec limits: search radius for stations and vehicles; alternatives slower than this × personal. */
export const SEARCH_RADIUS_M = 1500;
export const SLOWER_LIMIT = 3;
/** Candidates tried per end (next one when a ride would cross a forbidden zone or run out of range). */
const CANDIDATES = 3;

export interface MultiModalRequest {
  origin: [number, number];
  destination: [number, number];
  departure_time?: string;
  nighttime?: boolean;
  origin_name?: string;
  destination_name?: string;
  parking_type?: 'regular' | 'ebike';
  ebike_operator?: string;
}

/** The parking at the destination for `parking_type` (the response's `destination_parking`). */
export interface DestinationParking {
  parking_type: 'regular' | 'ebike';
  /**
   * `spot`: the personal ride ends at a spot; `park_anywhere`: the area does not mandate e-bike
   * bays; `not_found`: no qualifying spot within 1,500 m; `outside_operator_area`: the operator does
   * not serve the destination's area, the ride ends at its nearest bay.
   */
  status: 'spot' | 'park_anywhere' | 'not_found' | 'outside_operator_area';
  /** `false` when the destination's area is outside the e-bike operator's. */
  covered: boolean;
  /** The destination's area (borough) when the city has areas. */
  area: string | null;
  operator: string | null;
}

/** A saved custom route (an event's route): stops ridden in order, as non-reroutable legs. */
export interface CustomRoute {
  id: string;
  name: string;
  stops: [number, number][];
  /** The event's details as the Event resource shows them (the option's `event`). */
  event: unknown;
}

export interface ApiParking {
  type: 'regular' | 'ebike';
  name: string;
  location: [number, number];
  capacity: number | null;
  source: string;
  area: string | null;
  operator: string | null;
}

export interface Leg {
  mode: 'walking' | 'cycling';
  /** The engine's route object (UTF-8 JSON). */
  json: Buffer;
  geometry: Float64Array;
  distance: number;
  duration: number;
  startLabel?: string;
  endLabel?: string;
  /** Extra members written after the labels (a custom-route leg's `reroutable: false`). */
  extra?: Record<string, unknown>;
}

export interface Option {
  name: string;
  bike_type: 'Personal' | 'Docked' | 'Dockless';
  is_electric?: true;
  supersafe: boolean;
  nighttime: boolean;
  label: string | null;
  sublabel: string | null;
  legs: Leg[];
  disruptions?: ApiDisruption[];
  rental?: ApiRental;
  parking?: unknown;
  event?: unknown;
}

export const duration = (o: Option) => o.legs.reduce((a, l) => a + l.duration, 0);

const HEAD = /^\{"distance":(-?[\d.e+-]+),"duration":(-?[\d.e+-]+),/;

/** Reads distance and duration from the head of the engine's route JSON (they lead it). */
function leg(mode: Leg['mode'], out: RouteJsonOutput): Leg {
  const m = HEAD.exec(out.routeJson.subarray(0, 80).toString('latin1'));
  let distance: number;
  let seconds: number;
  if (m) {
    distance = Number(m[1]);
    seconds = Number(m[2]);
  } else {
    const j = JSON.parse(out.routeJson.toString()) as { distance: number; duration: number };
    distance = j.distance;
    seconds = j.duration;
  }
  return {
    mode,
    json: out.routeJson,
    geometry: out.geometry ?? new Float64Array(),
    distance,
    duration: seconds,
  };
}

/** Equirectangular metres between two `[lon, lat]` (city scale). */
export function meters(a: [number, number], b: [number, number]): number {
  const k = Math.cos(((a[1] + b[1]) * Math.PI) / 360);
  const dx = (b[0] - a[0]) * k;
  const dy = b[1] - a[1];
  return Math.sqrt(dx * dx + dy * dy) * 111_195;
}

export class Planner {
  readonly prepared: Prepared;
  readonly city: LoadedCity;
  private readonly snapRule: SnapRule;
  private readonly base: Omit<RouteInput, 'coordinates' | 'profile'>;
  /** The attached custom route and its legs (per speed), computed once for every option. */
  private custom: { route: CustomRoute; legs: Map<string, Promise<Leg[] | null>> } | null = null;

  constructor(
    engine: EngineService,
    repos: Repositories,
    readonly req: MultiModalRequest,
  ) {
    this.snapRule = engine;
    this.prepared = prepare(engine, repos, {
      coordinates: [req.origin, req.destination],
      profile: 'cycling',
      supersafe: true,
      departure_time: req.departure_time,
      nighttime: req.nighttime,
    });
    this.city = this.prepared.city;
    const input = this.prepared.input;
    this.base = { departureLocalMinutes: input.departureLocalMinutes, withGeometry: true };
  }

  get nighttime(): boolean {
    return this.prepared.nighttime;
  }

  /** Appends a custom route to every option; the trip then ends at its last stop. */
  attach(route: CustomRoute): void {
    this.custom = { route, legs: new Map() };
  }

  get customRoute(): CustomRoute | null {
    return this.custom?.route ?? null;
  }

  /** Where the trip ends: the destination, or the last stop of an attached custom route. */
  get end(): [number, number] {
    return this.custom?.route.stops.at(-1) ?? this.req.destination;
  }

  /** The custom route's legs, one per pair of stops, marked `reroutable: false`. */
  private customLegs(ebike: boolean): Promise<Leg[] | null> {
    const c = this.custom as NonNullable<Planner['custom']>;
    const key = ebike ? 'ebike' : 'bike';
    let legs = c.legs.get(key);
    if (!legs) {
      const stops = c.route.stops;
      legs = Promise.all(
        stops.slice(1).map((to, i) => this.route('cycling', stops[i] as [number, number], to, { ebike })),
      ).then((ls) => (ls.every((l): l is Leg => l !== null) ? ls : null));
      c.legs.set(key, legs);
    }
    return legs;
  }

  /**
   * The cycling legs from `from` to `to`: one ride, or with a custom route the ride to the
   * destination, on to the route's first stop, the route's legs, and on from its last stop to `to`.
   */
  async ride(
    from: [number, number],
    to: [number, number],
    opts: { supersafe?: boolean; night?: boolean; ebike?: boolean } = {},
  ): Promise<Leg[] | null> {
    if (!this.custom) {
      const l = await this.route('cycling', from, to, opts);
      return l ? [l] : null;
    }
    const { stops, name } = this.custom.route;
    const first = stops[0] as [number, number];
    const last = stops.at(-1) as [number, number];
    const dest = this.req.destination;
    const [toDest, toFirst, custom, onward] = await Promise.all([
      this.route('cycling', from, dest, opts),
      meters(dest, first) > 30 ? this.route('cycling', dest, first, opts) : undefined,
      this.customLegs(!!opts.ebike),
      meters(last, to) > 1 ? this.route('cycling', last, to, opts) : undefined,
    ]);
    if (!toDest || toFirst === null || !custom || onward === null) return null;
    const route = custom.map((l, i) => ({
      ...l,
      extra: { reroutable: false },
      ...(i === 0 ? { startLabel: name } : {}),
    }));
    return [toDest, ...(toFirst ? [toFirst] : []), ...route, ...(onward ? [onward] : [])];
  }

  /** One engine route; `null` when none exists. */
  async route(
    mode: Leg['mode'],
    from: [number, number],
    to: [number, number],
    opts: { supersafe?: boolean; night?: boolean; ebike?: boolean } = {},
  ): Promise<Leg | null> {
    let out: RouteJsonOutput | null;
    try {
      out = await this.city.engine.routeJson({
        ...this.base,
        coordinates: [from, to],
        profile: mode,
        ...(mode === 'cycling'
          ? { supersafe: opts.supersafe ?? true, night: opts.night ?? this.nighttime, ebike: opts.ebike }
          : {}),
      });
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
    if (!out) return null;
    // The snap radius (routing/snapping.ts), as in directions: a leg whose end lies off the data
    // has no route, rather than a route from a road beyond the radius.
    if (!checkSnapRadius(this.snapRule.snapRadiusM, [from, to], out.waypoints).within) {
      noRouteWaypoints(this.snapRule, this.city, [from, to], out.waypoints);
      return null;
    }
    return leg(mode, out);
  }

  /** Targets ranked by walking cost from `from` (at most `k`). */
  async nearestByWalking<T extends { lon: number; lat: number }>(
    from: [number, number],
    targets: T[],
    k = CANDIDATES,
    maxSeconds = 1800,
  ): Promise<T[]> {
    if (targets.length === 0) return [];
    const found = await this.city.engine.oneToMany({
      origin: from,
      targets: targets.map((t) => [t.lon, t.lat]),
      k,
      profile: 'walking',
      // 1,500 m as the crow flies is rarely more than 2.5 km on foot: half an hour at 5 km/h.
      maxSeconds,
    });
    return found.map((f) => targets[f.index] as T);
  }

  disruptionsNear(legs: Leg[]): ApiDisruption[] | undefined {
    const cycling = legs.filter((l) => l.mode === 'cycling').map((l) => l.geometry);
    return nearAny(this.prepared.candidates, cycling);
  }

  // ---- Personal bike -------------------------------------------------------------------------

  /**
   * SuperSafe™ and Direct (collapsed when identical); at night, or when the SuperSafe ride would
   * finish after dark, `SuperSafe™ Night`, `Direct · Night` and the standard `SuperSafe™`.
   * `standardSeconds` is the day SuperSafe trip's duration (what alternatives are measured against).
   */
  async personal(
    spot: ParkingSpot | null = null,
  ): Promise<{ options: Option[]; standardSeconds: number | null }> {
    const { origin } = this.req;
    // With a parking spot the ride ends there and the rest is walked.
    const destination = spot ? spot.location : this.end;
    const walkFromSpot = spot ? this.route('walking', spot.location, this.req.destination) : null;
    const lit = this.city.hasLightingData;
    const atDeparture = this.nighttime;
    const [safeDay, directDay] = await Promise.all([
      this.ride(origin, destination, { supersafe: true, night: false }),
      atDeparture ? null : this.ride(origin, destination, { supersafe: false, night: false }),
    ]);
    let night = atDeparture;
    if (!night && lit && this.req.nighttime === undefined && safeDay) {
      const arrival = {
        epochMs: this.prepared.departure.epochMs + seconds(safeDay) * 1000,
        offsetMinutes: this.prepared.departure.offsetMinutes,
      };
      night = isNight(arrival, destination[0], destination[1]);
    }
    const walk = walkFromSpot ? await walkFromSpot : null;
    // The spot is used only when it can be walked from; `parking` is null when a mode found none.
    const parking: ApiParking | null | undefined =
      this.req.parking_type === undefined || this.custom ? undefined : spot && walk ? apiParking(spot) : null;
    const option = (l: Leg[], supersafe: boolean, atNight: boolean): Option => ({
      name: 'Personal bike',
      bike_type: 'Personal',
      supersafe,
      nighttime: atNight,
      label: `${supersafe ? 'SuperSafe™' : 'Direct'}${atNight ? (supersafe ? ' Night' : ' · Night') : ''}`,
      sublabel: atNight ? 'Prefers well-lit roads' : null,
      legs: this.personalLegs(l, walk),
      ...(parking !== undefined ? { parking } : {}),
      ...this.withEvent(),
    });
    const options: Option[] = [];
    if (night) {
      const [safeNight, directNight] = await Promise.all([
        this.ride(origin, destination, { supersafe: true, night: true }),
        this.ride(origin, destination, { supersafe: false, night: true }),
      ]);
      if (safeNight) options.push(option(safeNight, true, true));
      if (directNight && !(safeNight && same(safeNight, directNight)))
        options.push(option(directNight, false, true));
      if (safeDay) options.push(option(safeDay, true, false));
    } else {
      if (safeDay) options.push(option(safeDay, true, false));
      if (directDay && !(safeDay && same(safeDay, directDay))) options.push(option(directDay, false, false));
    }
    for (const o of options) {
      const d = this.disruptionsNear(o.legs);
      if (d) o.disruptions = d;
    }
    return { options, standardSeconds: safeDay ? seconds(safeDay) + (walk?.duration ?? 0) : null };
  }

  /** A personal ride: the origin's name at its start; `Park bike` then a walk, or `End`. */
  private personalLegs(ride: Leg[], walk: Leg | null): Leg[] {
    const legs = ride.map((l) => ({ ...l }));
    const first = legs[0] as Leg;
    if (this.req.origin_name) first.startLabel = this.req.origin_name;
    (legs.at(-1) as Leg).endLabel = walk ? 'Park bike' : 'End';
    return walk ? [...legs, { ...walk, endLabel: 'End' }] : legs;
  }

  /** The attached custom route's event, for every option. */
  private withEvent(): { event?: unknown } {
    return this.custom ? { event: this.custom.route.event } : {};
  }

  // ---- Parking at the destination ----------------------------------------------------------------

  /** The spot the personal ride ends at for `parking_type`, and what `destination_parking` says. */
  async parking(
    service: ParkingService,
  ): Promise<{ spot: ParkingSpot | null; destination: DestinationParking } | null> {
    const type = this.req.parking_type;
    if (!type) return null;
    const dest = this.req.destination;
    const data = service.forCity(this.city);
    const area = this.city.coverage.find((a) => contains(a, dest))?.name ?? null;
    const operator = type === 'ebike' ? (this.req.ebike_operator ?? null) : null;
    const served = operator === null || (area !== null && (data.operators.get(operator)?.has(area) ?? false));
    const answer = (status: DestinationParking['status'], spot: ParkingSpot | null) => ({
      spot,
      destination: { parking_type: type, status, covered: served, area, operator },
    });
    const nearest = async (spots: ParkingSpot[], radius: number) => {
      const near = spots
        .filter((s) => meters(dest, s.location) <= radius)
        .map((s) => ({ lon: s.location[0], lat: s.location[1], s }));
      const [best] = await this.nearestByWalking(dest, near, 1, radius === SEARCH_RADIUS_M ? 1800 : 3600);
      return best?.s ?? null;
    };
    if (type === 'regular') {
      const spot = await nearest(data.regular, SEARCH_RADIUS_M);
      return answer(spot ? 'spot' : 'not_found', spot);
    }
    const mine = (s: ParkingSpot) => operator === null || s.operator === null || s.operator === operator;
    if (!served) {
      // The operator does not serve the destination: its nearest bay inside its own area.
      const areas = data.operators.get(operator ?? '') ?? new Set<string>();
      const spot = await nearest(
        data.ebike.filter((s) => mine(s) && s.area !== null && areas.has(s.area)),
        Number.POSITIVE_INFINITY,
      );
      return answer(spot ? 'outside_operator_area' : 'not_found', spot);
    }
    if (area === null || !data.bayAreas.has(area)) return answer('park_anywhere', null);
    const spot = await nearest(
      data.ebike.filter((s) => mine(s)),
      SEARCH_RADIUS_M,
    );
    return answer(spot ? 'spot' : 'not_found', spot);
  }

  // ---- Docked bike-share -----------------------------------------------------------------------

  /** Walk to a station with a bike (an e-bike when `electric`), ride, walk from a station with a dock. */
  async docked(system: GbfsSystem, electric: boolean): Promise<Option | null> {
    const { origin } = this.req;
    const destination = this.end;
    const fence = new Geofence(system);
    const stations = system.stations();
    if (stations.length === 0) return null;
    const pickups: LiveStation[] = [];
    const dropoffs: LiveStation[] = [];
    for (const s of stations) {
      const p: [number, number] = [s.lon, s.lat];
      if (s.renting && meters(origin, p) <= SEARCH_RADIUS_M && fence.canStart(p, null)) {
        const available = electric ? (s.ebikes ?? 0) : s.bikes - (s.ebikes ?? 0);
        if (available > 0) pickups.push(s);
      }
      if (
        s.returning &&
        (s.docks ?? 1) > 0 &&
        meters(destination, p) <= SEARCH_RADIUS_M &&
        fence.canEnd(p, null)
      ) {
        dropoffs.push(s);
      }
    }
    if (pickups.length === 0 || dropoffs.length === 0) return null;
    const [from, to] = await Promise.all([
      this.nearestByWalking(origin, pickups),
      // Walking is the same both ways on the network (one-ways do not bind pedestrians).
      this.nearestByWalking(destination, dropoffs),
    ]);
    for (const p of from) {
      for (const q of to) {
        if (p.id === q.id) continue;
        const pp: [number, number] = [p.lon, p.lat];
        const qq: [number, number] = [q.lon, q.lat];
        const [walk1, ride, walk2] = await Promise.all([
          this.route('walking', origin, pp),
          this.ride(pp, qq, { ebike: electric }),
          this.route('walking', qq, destination),
        ]);
        if (!walk1 || !ride || !walk2) continue;
        if (!ride.every((l) => fence.canRide(l.geometry, null))) continue;
        const count = electric ? p.ebikes : p.ebikes === null ? p.bikes : p.bikes - p.ebikes;
        walk1.endLabel = count === null ? 'Pick up bike' : plural(count, electric ? 'e-bike' : 'bike');
        if (this.req.origin_name) walk1.startLabel = this.req.origin_name;
        (ride.at(-1) as Leg).endLabel = q.docks === null ? 'Drop off bike' : plural(q.docks, 'dock');
        walk2.endLabel = 'End';
        const legs = [walk1, ...ride, walk2];
        return {
          name: system.name,
          bike_type: 'Docked',
          ...(electric ? { is_electric: true as const } : {}),
          supersafe: true,
          nighttime: this.nighttime,
          label: null,
          sublabel: null,
          legs,
          ...this.withDisruptions(legs),
          rental: rental(
            system,
            { electric, planId: null, seconds: seconds(ride), meters: metres(ride) },
            p.rentalUris,
          ),
          ...this.withEvent(),
        };
      }
    }
    return null;
  }

  // ---- Dockless bike-share ---------------------------------------------------------------------

  /** Walk to the nearest free-floating bike (by walking cost) and ride it to the destination. */
  async dockless(system: GbfsSystem): Promise<Option | null> {
    const { origin } = this.req;
    const destination = this.end;
    const fence = new Geofence(system);
    const direct = meters(origin, destination);
    const candidates: Vehicle[] = [];
    for (const v of system.vehicles()) {
      if (v.formFactor !== 'bicycle') continue;
      const p: [number, number] = [v.lon, v.lat];
      if (meters(origin, p) > SEARCH_RADIUS_M) continue;
      // A bike that cannot even cover the straight line to the destination is not offered.
      if (v.currentRangeMeters !== null && v.currentRangeMeters < direct) continue;
      if (!fence.canStart(p, v.typeId)) continue;
      candidates.push(v);
    }
    if (candidates.length === 0) return null;
    const ranked = await this.nearestByWalking(origin, candidates);
    for (const v of ranked) {
      if (!fence.canEnd(destination, v.typeId)) return null;
      const vv: [number, number] = [v.lon, v.lat];
      const [walk, ride] = await Promise.all([
        this.route('walking', origin, vv),
        this.ride(vv, destination, { ebike: v.electric }),
      ]);
      if (!walk || !ride) continue;
      // The e-bike's remaining range must finish the ride.
      if (v.currentRangeMeters !== null && v.currentRangeMeters < metres(ride)) continue;
      if (!ride.every((l) => fence.canRide(l.geometry, v.typeId))) continue;
      walk.endLabel = 'Pick up bike';
      if (this.req.origin_name) walk.startLabel = this.req.origin_name;
      (ride.at(-1) as Leg).endLabel = 'End';
      const legs = [walk, ...ride];
      const type = v.typeId ? system.vehicleTypes.get(v.typeId) : undefined;
      return {
        name: system.name,
        bike_type: 'Dockless',
        ...(v.electric ? { is_electric: true as const } : {}),
        supersafe: true,
        nighttime: this.nighttime,
        label: null,
        sublabel: null,
        legs,
        ...this.withDisruptions(legs),
        rental: rental(
          system,
          {
            electric: v.electric,
            planId: type?.pricingPlanId ?? null,
            seconds: seconds(ride),
            meters: metres(ride),
          },
          v.rentalUris as RentalUris | null,
        ),
        ...this.withEvent(),
      };
    }
    return null;
  }

  private withDisruptions(legs: Leg[]): { disruptions?: ApiDisruption[] } {
    const d = this.disruptionsNear(legs);
    return d ? { disruptions: d } : {};
  }
}

const seconds = (legs: Leg[]) => legs.reduce((a, l) => a + l.duration, 0);
const metres = (legs: Leg[]) => legs.reduce((a, l) => a + l.distance, 0);

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

const apiParking = (s: ParkingSpot): ApiParking => ({
  type: s.kind,
  name: s.name,
  location: s.location,
  capacity: s.capacity,
  source: s.source,
  area: s.area,
  operator: s.operator,
});

/** Two rides along the same roads. */
function same(x: Leg[], y: Leg[]): boolean {
  if (x.length !== y.length) return false;
  return x.every((a, k) => {
    const b = y[k] as Leg;
    if (a.geometry.length !== b.geometry.length) return false;
    for (let i = 0; i < a.geometry.length; i++) if (a.geometry[i] !== b.geometry[i]) return false;
    return true;
  });
}

/** Every option of a trip, in the spec's order, with the 3 × rule applied. */
export async function planTrip(
  engine: EngineService,
  repos: Repositories,
  services: { systemsFor: (cityId: string) => GbfsSystem[]; parking: ParkingService },
  req: MultiModalRequest,
  custom: CustomRoute | null = null,
): Promise<{ planner: Planner; options: Option[]; destinationParking: DestinationParking | null }> {
  const planner = new Planner(engine, repos, req);
  const systems = services.systemsFor(planner.city.id);
  if (custom) planner.attach(custom);
  // Parking is ignored when a custom route is attached.
  const parking = custom ? null : await planner.parking(services.parking);
  const [personal, docked, ebike, dockless] = await Promise.all([
    planner.personal(parking?.spot ?? null),
    Promise.all(systems.map((s) => planner.docked(s, false))),
    Promise.all(systems.map((s) => planner.docked(s, true))),
    Promise.all(systems.map((s) => planner.dockless(s))),
  ]);
  const limit =
    personal.standardSeconds !== null ? SLOWER_LIMIT * personal.standardSeconds : Number.POSITIVE_INFINITY;
  const shared = [...docked, ...ebike, ...dockless].filter(
    (o): o is Option => o !== null && duration(o) <= limit,
  );
  return {
    planner,
    options: [...personal.options, ...shared],
    destinationParking: parking?.destination ?? null,
  };
}

// ---- Writing the response ----------------------------------------------------------------------

function writeLeg(l: Leg): Buffer {
  const head: Record<string, unknown> = { mode: l.mode };
  if (l.startLabel !== undefined) head.start_label = l.startLabel;
  if (l.endLabel !== undefined) head.end_label = l.endLabel;
  if (l.extra) Object.assign(head, l.extra);
  const h = JSON.stringify(head);
  // `{"mode":…,"end_label":…` + `,` + the route object's members.
  return Buffer.concat([Buffer.from(`${h.slice(0, -1)},`), l.json.subarray(1)]);
}

export function writeOption(o: Option): Buffer {
  const head = {
    name: o.name,
    bike_type: o.bike_type,
    ...(o.is_electric ? { is_electric: true } : {}),
    supersafe: o.supersafe,
    nighttime: o.nighttime,
    label: o.label,
    sublabel: o.sublabel,
  };
  const tail: Record<string, unknown> = {};
  if (o.disruptions) tail.disruptions = o.disruptions;
  if (o.rental) tail.rental = o.rental;
  if (o.parking !== undefined) tail.parking = o.parking;
  if (o.event !== undefined) tail.event = o.event;
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"legs":[`)];
  o.legs.forEach((l, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(writeLeg(l));
  });
  const t = JSON.stringify(tail);
  parts.push(Buffer.from(t === '{}' ? ']}' : `],${t.slice(1)}`));
  return Buffer.concat(parts);
}

export function writeResponse(searchId: string, options: Option[], destinationParking: unknown): Buffer {
  const parts: Buffer[] = [Buffer.from(`{"search_id":${JSON.stringify(searchId)},"options":[`)];
  options.forEach((o, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(writeOption(o));
  });
  parts.push(Buffer.from(`],"destination_parking":${JSON.stringify(destinationParking ?? null)}}`));
  return Buffer.concat(parts);
}
