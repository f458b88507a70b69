// What an explanation may say, decided before any wording: the comparison of SuperSafe with the
// most direct route reduced to facts that are true of the two routes (or of the client's context),
// each carrying the one street it may name and on which side. The wording (phrase.ts) only chooses
// among these facts and their phrasings, so every sentence it writes is true by construction.
import type { RouteFacts, RouteSummary } from './summary.js';

/** The side of the comparison a named street lies on. */
export type Side = 'safe' | 'direct';

/** A street or signed cycle route the text may name, and the side it lies on. */
export interface Named {
  name: string;
  side: Side;
  /** A signed cycle route rather than a street. */
  cycleRoute?: boolean;
}

/** The first sentence's subject: what SuperSafe does differently, most important first. */
export type KeyDifference =
  | {
      kind: 'disruption';
      /** `roadworks` (an imported works feed) or a curated `closure_window`. */
      works: 'roadworks' | 'closure_window';
      severity: 'closed' | 'avoid';
      /** The disrupted street, when it lies on the direct route. */
      street: Named | null;
      /** When it is in force, in words (context only). */
      schedule: string | null;
    }
  | { kind: 'busy_street'; street: Named }
  | { kind: 'rider_report'; street: Named | null }
  | { kind: 'restricted_turn'; street: Named | null }
  /** A signed cycle route (or, failing every other difference, a street) SuperSafe takes and Direct does not. */
  | { kind: 'takes'; street: Named }
  | { kind: 'quieter' }
  | { kind: 'less_busy' };

export interface Comparison {
  key: KeyDifference;
  /** A street or cycle route SuperSafe takes that the direct route does not (never with a safe-side key). */
  via: Named | null;
  /** Whole minutes SuperSafe is longer (rounded down); 0 under a minute (time is then never mentioned). */
  minutesLonger: number;
  /** A night comparison on which SuperSafe is the better-lit route. */
  betterLit: boolean;
  lessClimb: boolean;
  /** Further things avoided, described without naming a street (context's second and third sentences). */
  others: { busyStreets: number; turns: number; reports: number; works: number };
}

/** Below these the difference is not worth a word (metres). */
const MIN_BUSY_AVOIDED_M = 30;
const MIN_VIA_M = 100;
const MIN_CHARACTER_GAIN_M = 100;
const MIN_CLIMB_GAIN_M = 5;
const MIN_LIT_GAIN = 0.05;

/** Whole minutes SuperSafe is longer, rounded down (never overstated); 0 under a minute. */
export function minutesLonger(safe: RouteSummary, direct: RouteSummary): number {
  return Math.max(0, Math.floor((safe.seconds - direct.seconds) / 60));
}

export function betterLit(night: boolean, safe: RouteSummary, direct: RouteSummary): boolean {
  return (
    night &&
    safe.lit_share !== null &&
    direct.lit_share !== null &&
    safe.lit_share >= direct.lit_share + MIN_LIT_GAIN
  );
}

export function lessClimb(safe: RouteSummary, direct: RouteSummary): boolean {
  return safe.climb_meters + MIN_CLIMB_GAIN_M <= direct.climb_meters;
}

const quiet = (s: RouteSummary) => s.character_meters.cycleway + s.character_meters.quiet;

/** The busiest street the direct route rides and SuperSafe does not ride at all (very busy metres count double). */
export function busiestAvoided(safe: RouteFacts, direct: RouteFacts): string | null {
  let best: string | null = null;
  let bestScore = 0;
  for (const s of direct.streets.values()) {
    if (safe.streets.has(s.name) || s.busy + s.veryBusy < MIN_BUSY_AVOIDED_M) continue;
    const score = 2 * s.veryBusy + s.busy;
    if (score > bestScore || (score === bestScore && best !== null && s.name < best)) {
      best = s.name;
      bestScore = score;
    }
  }
  return best;
}

/** Cycle route "names" that only say what the route is ("Local cycle route"): no reference to a rider. */
const GENERIC_ROUTE =
  /^((local|regional|national|city|london) )?(cycle|bike|bicycle) ?(route|network|path|lane)s?$/i;

/**
 * What SuperSafe takes instead: the signed cycle route it rides longest that the direct route never
 * rides (the spec prefers a cycle route's name to its street's), else the street it rides longest
 * that the direct route never rides; at least 100 m either way.
 */
export function viaOf(safe: RouteFacts, direct: RouteFacts): Named | null {
  let best: Named | null = null;
  let bestM = MIN_VIA_M;
  for (const [name, m] of safe.cycleRoutes) {
    if (GENERIC_ROUTE.test(name) || direct.cycleRoutes.has(name) || direct.streets.has(name) || m < bestM)
      continue;
    if (m > bestM || best === null || name < best.name) best = { name, side: 'safe', cycleRoute: true };
    bestM = m;
  }
  if (best) return best;
  for (const s of safe.streets.values()) {
    if (direct.streets.has(s.name) || direct.cycleRoutes.has(s.name) || s.meters < bestM) continue;
    if (s.meters > bestM || best === null || s.name < best.name) best = { name: s.name, side: 'safe' };
    bestM = s.meters;
  }
  return best;
}

/** An avoidance in force at the departure (a disruption or an accepted rider report's change). */
export interface InForce {
  kind: 'roadworks' | 'closure_window' | 'rider_report';
  severity: 'closed' | 'avoid';
  /** The street as the entry names it (rider reports: none; the ways' names are read from the route). */
  name: string;
  wayIds: number[];
  /** The pin, for entries that have one. */
  location: [number, number] | null;
}

/** Metres from a point to a flat `[lon, lat, …]` line (local projection; fine at city scale). */
export function metersToLine([x, y]: [number, number], flat: number[]): number {
  const k = Math.cos((y * Math.PI) / 180);
  const f = (Math.PI * 6_371_008.8) / 180;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 3 < flat.length; i += 2) {
    const ax = ((flat[i] as number) - x) * f * k;
    const ay = ((flat[i + 1] as number) - y) * f;
    const bx = ((flat[i + 2] as number) - x) * f * k;
    const by = ((flat[i + 3] as number) - y) * f;
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 > 0 ? Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2)) : 0;
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

/** Within this of a route, a disruption's pin concerns it (the directions listing's rule). */
export const NEAR_M = 150;

/**
 * Whether an avoidance in force applies to this comparison: SuperSafe rides none of its ways, and
 * the direct route rides one of them or its pin lies within about 150 m of either route.
 */
export function applies(e: InForce, safe: RouteFacts, direct: RouteFacts): boolean {
  if (e.wayIds.length === 0 || e.wayIds.some((w) => safe.wayIds.has(w))) return false;
  if (e.wayIds.some((w) => direct.wayIds.has(w))) return true;
  return (
    e.location !== null &&
    (metersToLine(e.location, direct.geometry) <= NEAR_M || metersToLine(e.location, safe.geometry) <= NEAR_M)
  );
}

/** The comparison of two planned routes, or null when their difference cannot be put into words. */
export function compareRoutes(
  safe: RouteFacts,
  direct: RouteFacts,
  night: boolean,
  inForce: InForce[],
): Comparison | null {
  const applying = inForce.filter((e) => applies(e, safe, direct));
  const works = applying.filter((e) => e.kind !== 'rider_report');
  const reports = applying.filter((e) => e.kind === 'rider_report');
  // Closures before avoid windows; the one whose street the direct route rides first.
  works.sort(
    (a, b) =>
      Number(b.severity === 'closed') - Number(a.severity === 'closed') ||
      Number(direct.streets.has(b.name)) - Number(direct.streets.has(a.name)),
  );
  const busiest = busiestAvoided(safe, direct);
  let via = viaOf(safe, direct);
  let key: KeyDifference | null = null;
  const first = works[0];
  if (first) {
    key = {
      kind: 'disruption',
      works: first.kind as 'roadworks' | 'closure_window',
      severity: first.severity,
      street: direct.streets.has(first.name) ? { name: first.name, side: 'direct' } : null,
      schedule: null,
    };
  } else if (busiest) {
    key = { kind: 'busy_street', street: { name: busiest, side: 'direct' } };
  } else if (reports[0]) {
    // The reported street as the direct route names it, when SuperSafe rides none of it.
    const name = reports[0].wayIds.map((w) => direct.wayNames.get(w)).find((n) => n && !safe.streets.has(n));
    key = { kind: 'rider_report', street: name ? { name, side: 'direct' } : null };
  } else if (via?.cycleRoute) {
    key = { kind: 'takes', street: via };
    via = null;
  } else if (quiet(safe.summary) >= quiet(direct.summary) + MIN_CHARACTER_GAIN_M) {
    key = { kind: 'quieter' };
  } else if (
    safe.summary.character_meters.busy + MIN_BUSY_AVOIDED_M <=
    direct.summary.character_meters.busy
  ) {
    key = { kind: 'less_busy' };
  } else if (via && safe.summary.character_meters.busy <= direct.summary.character_meters.busy) {
    // Only what differs, and only when SuperSafe is not the busier route.
    key = { kind: 'takes', street: via };
    via = null;
  }
  if (!key) return null;
  return {
    key,
    via,
    minutesLonger: minutesLonger(safe.summary, direct.summary),
    betterLit: betterLit(night, safe.summary, direct.summary),
    lessClimb: lessClimb(safe.summary, direct.summary),
    others: {
      busyStreets: 0,
      turns: 0,
      reports: key.kind === 'rider_report' ? reports.length - 1 : reports.length,
      works: Math.max(0, works.length - 1),
    },
  };
}
