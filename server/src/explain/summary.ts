// What the explanation knows about one planned route: the spec's route summary (metres per safety
// classification, climb, lit share) and, per street and per signed cycle route, the metres ridden
// and in which classes. Built from the engine's per-arc details (`RouteInput.arcDetails`).
import type { RouteOutput } from '../../../addon/index.js';

/** The spec's classifications of cycling metres (`very_busy` arcs count as `busy`). */
export const CHARACTERS = ['cycleway', 'quiet', 'shared', 'moderate', 'busy'] as const;
export type Character = (typeof CHARACTERS)[number];

/** The spec's route summary (the shape of `context.safe` / `context.direct`). */
export interface RouteSummary {
  label: string;
  meters: number;
  seconds: number;
  climb_meters: number;
  descent_meters: number;
  character_meters: Record<Character, number>;
  /** 0 to 1; null on daytime comparisons. */
  lit_share: number | null;
}

/** One street (by name) as a route rides it. */
export interface StreetUse {
  name: string;
  meters: number;
  /** Metres on arcs the engine rates `busy` and `very_busy`. */
  busy: number;
  veryBusy: number;
  /** Signed cycle routes along the street, with the metres they share with it. */
  cycleRoutes: Map<string, number>;
}

/** A planned route as the explanation reads it. */
export interface RouteFacts {
  summary: RouteSummary;
  /** Streets ridden, by the name a rider reads (the name, else the road number). */
  streets: Map<string, StreetUse>;
  /** Signed cycle routes ridden, with metres. */
  cycleRoutes: Map<string, number>;
  /** OSM ways ridden, with the name a rider reads for each. */
  wayIds: Set<number>;
  wayNames: Map<number, string>;
  /** Directed arcs in riding order, with their lengths (for the identical-route test). */
  arcs: { arc: number; distance: number }[];
  /** Flat `[lon, lat, …]` of the whole route. */
  geometry: number[];
}

/** The name a rider reads for a road: its name, else its number (`ref`), else none. */
export const streetName = (name: string, ref: string): string => name.trim() || ref.trim();

export function routeFacts(out: RouteOutput, label: string, night: boolean): RouteFacts {
  const character: Record<Character, number> = { cycleway: 0, quiet: 0, shared: 0, moderate: 0, busy: 0 };
  const streets = new Map<string, StreetUse>();
  const cycleRoutes = new Map<string, number>();
  const wayIds = new Set<number>();
  const wayNames = new Map<number, string>();
  const arcs: { arc: number; distance: number }[] = [];
  const geometry: number[] = [];
  let meters = 0;
  let seconds = 0;
  let climb = 0;
  let descent = 0;
  let cyclingMeters = 0;
  let litMeters = 0;
  for (const leg of out.legs) {
    meters += leg.distance;
    seconds += leg.duration;
    climb += leg.elevationGain;
    descent += leg.elevationLoss;
    for (let i = 0; i < leg.geometry.length; i++) geometry.push(leg.geometry[i] as number);
    for (const a of leg.arcs) {
      arcs.push({ arc: a.arc, distance: a.distance });
      wayIds.add(a.wayId);
      const cls: Character = a.safetyClass === 'very_busy' ? 'busy' : (a.safetyClass as Character);
      if (cls in character) character[cls] += a.distance;
      cyclingMeters += a.distance;
      if (a.lit) litMeters += a.distance;
      for (const r of a.cycleRoutes) cycleRoutes.set(r, (cycleRoutes.get(r) ?? 0) + a.distance);
      const name = streetName(a.name, a.ref);
      if (!name) continue;
      wayNames.set(a.wayId, name);
      let s = streets.get(name);
      if (!s) {
        s = { name, meters: 0, busy: 0, veryBusy: 0, cycleRoutes: new Map() };
        streets.set(name, s);
      }
      s.meters += a.distance;
      if (a.safetyClass === 'busy') s.busy += a.distance;
      if (a.safetyClass === 'very_busy') s.veryBusy += a.distance;
      for (const r of a.cycleRoutes) s.cycleRoutes.set(r, (s.cycleRoutes.get(r) ?? 0) + a.distance);
    }
  }
  for (const c of CHARACTERS) character[c] = Math.round(character[c]);
  return {
    summary: {
      label,
      meters: Math.round(meters),
      // Unrounded: whole minutes are counted from it.
      seconds,
      climb_meters: Math.round(climb),
      descent_meters: Math.round(descent),
      character_meters: character,
      lit_share: night ? (cyclingMeters > 0 ? litMeters / cyclingMeters : 0) : null,
    },
    streets,
    cycleRoutes,
    wayIds,
    wayNames,
    arcs,
    geometry,
  };
}

/** Fragments shorter than this do not make two routes different (interface spec). */
export const FRAGMENT_M = 30;

/**
 * Whether two routes ride the same roads, or differ only by fragments under 30 m: every maximal
 * run of arcs one route rides and the other does not is shorter than 30 m, on both sides.
 */
export function sameRoads(a: RouteFacts, b: RouteFacts): boolean {
  return longestFragment(a, b) < FRAGMENT_M && longestFragment(b, a) < FRAGMENT_M;
}

/** The longest run of `a`'s arcs that `b` does not ride (metres). */
export function longestFragment(a: RouteFacts, b: RouteFacts): number {
  const other = new Set(b.arcs.map((x) => x.arc));
  let longest = 0;
  let run = 0;
  for (const x of a.arcs) {
    if (other.has(x.arc)) run = 0;
    else {
      run += x.distance;
      longest = Math.max(longest, run);
    }
  }
  return longest;
}
