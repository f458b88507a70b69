// Automated analysis of road reports: a background worker (never on the request path) that takes
// each `received` report, matches it to the nearest routable ways of its city, looks for duplicates,
// classifies it (subtype, else documented free-text rules, else the issue type's default), compares
// it with the graph and the changes in force, and either proposes a concrete change (→ `in_review`)
// or closes it with the reason. The rules are listed in docs/api.md ("Report analysis").
import type { FastifyBaseLogger } from 'fastify';
import type { RoadSegment } from '../../../addon/index.js';
import type { ReportRecord, ReportStatus } from '../db/reports.js';
import type { Repositories } from '../db/repositories.js';
import type { EngineService, LoadedCity } from '../plugins/engine.js';
import { contains } from '../routing/coverage.js';
import { distanceToLine, pairs } from '../routing/directions.js';
import { type ChangeSpec, changeSchema, localDateTimeOf, nowLocal } from './changes.js';

/** What a report means for routing, whatever words it came in. */
export type Reading =
  | 'blocked_permanent'
  | 'blocked_temporary'
  | 'one_way'
  | 'turn_ban'
  | 'road_missing'
  | 'unsafe_traffic'
  | 'unsafe_lane'
  | 'pedestrians'
  | 'rough'
  | 'hilly'
  | 'better_route_quieter'
  | 'better_route_faster'
  | 'instructions'
  | 'unclassified';

/** Recognised subtypes, per issue type (interface spec, POST /reports/). */
export const SUBTYPES: Record<string, readonly string[]> = {
  road_closed: [
    'private_locked',
    'barrier_gate',
    'no_cycling_zone',
    'temporary_closure',
    'permanent_closure',
    'one_way',
    'road_missing',
  ],
  road_unsafe: ['poor_bike_lane', 'too_many_peds', 'too_many_vehicles'],
  bad_routing: ['faster_route', 'quieter_route', 'fewer_turns'],
  unclear_instructions: ['wrong_direction', 'unclear_instruction', 'missing_instruction'],
  unpleasant: ['cobbles_rough', 'too_hilly', 'too_many_peds'],
  other: [],
};
export const ISSUE_TYPES = Object.keys(SUBTYPES) as [string, ...string[]];

const BY_SUBTYPE: Record<string, Reading> = {
  'road_closed/private_locked': 'blocked_permanent',
  'road_closed/barrier_gate': 'blocked_permanent',
  'road_closed/no_cycling_zone': 'blocked_permanent',
  'road_closed/permanent_closure': 'blocked_permanent',
  'road_closed/temporary_closure': 'blocked_temporary',
  'road_closed/one_way': 'one_way',
  'road_closed/road_missing': 'road_missing',
  'road_unsafe/poor_bike_lane': 'unsafe_lane',
  'road_unsafe/too_many_peds': 'pedestrians',
  'road_unsafe/too_many_vehicles': 'unsafe_traffic',
  'bad_routing/faster_route': 'better_route_faster',
  'bad_routing/quieter_route': 'better_route_quieter',
  'bad_routing/fewer_turns': 'better_route_faster',
  'unclear_instructions/wrong_direction': 'instructions',
  'unclear_instructions/unclear_instruction': 'instructions',
  'unclear_instructions/missing_instruction': 'instructions',
  'unpleasant/cobbles_rough': 'rough',
  'unpleasant/too_hilly': 'hilly',
  'unpleasant/too_many_peds': 'pedestrians',
};

/** Free-text rules, tried in order on the description (and an unclassified subtype). */
export const TEXT_RULES: [RegExp, Reading][] = [
  [
    /\b(no (left|right|u)[- ]?turns?|illegal turn|turn (is )?(not allowed|prohibited|banned|forbidden)|can'?t turn)\b/i,
    'turn_ban',
  ],
  [/\b(one[- ]?way|wrong way|against (the )?traffic)\b/i, 'one_way'],
  [
    /\b(does ?n[o']t exist|no such (road|street|path)|not on the map|missing (road|street|path))\b/i,
    'road_missing',
  ],
  [
    /\b(construction|road ?works?|works|temporar\w*|today|tonight|this week|until|detour|scaffold\w*|event|parade|market)\b/i,
    'blocked_temporary',
  ],
  [
    /\b(closed|blocked|fenced|gated?|locked|private|no (bikes|cycling|bicycles)|impassable|shut|bollards?)\b/i,
    'blocked_permanent',
  ],
  [/\b(pothole\w*|cobble\w*|rough|gravel|bumpy|broken (pavement|asphalt)|cracked)\b/i, 'rough'],
  [/\b(hill|hilly|steep|climb)\b/i, 'hilly'],
  [/\b(pedestrians?|crowd\w*|tourists?|foot traffic)\b/i, 'pedestrians'],
  [/\b(bike lane|cycle lane|double[- ]parked|parked cars?|door\w*)\b/i, 'unsafe_lane'],
  [/\b(traffic|trucks?|cars|speeding|fast|dangerous|unsafe|buses)\b/i, 'unsafe_traffic'],
];

/** When neither subtype nor text decides: the issue type's own meaning. */
const BY_TYPE: Record<string, Reading> = {
  road_closed: 'blocked_temporary',
  road_unsafe: 'unsafe_traffic',
  bad_routing: 'better_route_quieter',
  unclear_instructions: 'instructions',
  unpleasant: 'rough',
  other: 'unclassified',
};

export function classify(
  issueType: string,
  subtype: string | null,
  description: string,
): {
  reading: Reading;
  by: 'subtype' | 'text' | 'issue_type';
} {
  const known = subtype ? BY_SUBTYPE[`${issueType}/${subtype}`] : undefined;
  if (known) return { reading: known, by: 'subtype' };
  const text = `${subtype && subtype !== 'other' ? subtype.replace(/_/g, ' ') : ''} ${description}`;
  for (const [re, reading] of TEXT_RULES) if (re.test(text)) return { reading, by: 'text' };
  return { reading: BY_TYPE[issueType] ?? 'unclassified', by: 'issue_type' };
}

/** Weight factors proposed for ways riders find unsafe or unpleasant (editable by the reviewer). */
export const FACTORS: Partial<Record<Reading, number>> = {
  unsafe_traffic: 2,
  unsafe_lane: 1.5,
  pedestrians: 1.3,
  rough: 1.3,
  hilly: 1.2,
  better_route_quieter: 1.5,
  better_route_faster: 0.8,
};
/** How long a proposed temporary closure lasts by default: the rest of today and seven more days. */
export const TEMPORARY_DAYS = 7;
/** Ways farther than this from the reported point are not matched. */
export const MATCH_RADIUS_M = 40;
/** Open reports on the same way within this distance are duplicates. */
export const DUPLICATE_RADIUS_M = 50;

export interface MatchedWay {
  way_id: number;
  name: string;
  distance_m: number;
  forward_class: string;
  backward_class: string;
  forward_bike: string;
  backward_bike: string;
  length_m: number;
  /** A point of the way nearest to the report (the pin of a disruption made from it). */
  nearest: [number, number];
}

const metresPerDegLat = 111_320;

/**
 * The ways near a point, nearest first (one entry per way, its nearest stretch). Ways closed to
 * bicycles in the graph are matched too: the analysis says the report is already fixed then.
 */
export async function nearbyWays(
  city: LoadedCity,
  [lon, lat]: [number, number],
  radius: number,
): Promise<MatchedWay[]> {
  const dLat = radius / metresPerDegLat;
  const dLon = dLat / Math.cos((lat * Math.PI) / 180);
  const segs = await city.engine.roads([lon - dLon, lat - dLat, lon + dLon, lat + dLat]);
  return waysNear(segs, [lon, lat], radius);
}

/** `nearbyWays` over stretches already fetched (one fetch for many points). */
export function waysNear(segs: RoadSegment[], [lon, lat]: [number, number], radius: number): MatchedWay[] {
  const byWay = new Map<number, MatchedWay>();
  const lengths = new Map<number, number>();
  for (const s of segs) {
    lengths.set(s.wayId, (lengths.get(s.wayId) ?? 0) + s.length);
    const line = pairs(s.geometry);
    const d = distanceToLine([lon, lat], line);
    if (d > radius) continue;
    const prev = byWay.get(s.wayId);
    if (prev && prev.distance_m <= d) continue;
    byWay.set(s.wayId, {
      way_id: s.wayId,
      name: s.name || s.ref,
      distance_m: Math.round(d * 10) / 10,
      forward_class: s.forwardClass,
      backward_class: s.backwardClass,
      forward_bike: s.forwardBike,
      backward_bike: s.backwardBike,
      length_m: 0,
      nearest: nearestOn([lon, lat], line),
    });
  }
  return [...byWay.values()]
    .map((w) => ({ ...w, length_m: Math.round(lengths.get(w.way_id) ?? 0) }))
    .sort((a, b) => a.distance_m - b.distance_m);
}

/** The point of a polyline nearest to `p` (local flat projection). */
function nearestOn([x, y]: [number, number], line: number[][]): [number, number] {
  const k = Math.cos((y * Math.PI) / 180);
  let best: [number, number] = [x, y];
  let bestD = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 1 < line.length; i++) {
    const [ax, ay] = line[i] as [number, number];
    const [bx, by] = line[i + 1] as [number, number];
    const dx = (bx - ax) * k;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 > 0 ? Math.max(0, Math.min(1, ((x - ax) * k * dx + (y - ay) * dy) / len2)) : 0;
    const px = ax + t * (bx - ax);
    const py = ay + t * (by - ay);
    const d = Math.hypot((px - x) * k, py - y);
    if (d < bestD) {
      bestD = d;
      best = [Math.round(px * 1e6) / 1e6, Math.round(py * 1e6) / 1e6];
    }
  }
  return best;
}

export interface Outcome {
  status: ReportStatus;
  summary: string;
  city: string | null;
  analysis: Record<string, unknown>;
  proposal: ChangeSpec | null;
  duplicateOf: number | null;
}

const label = (w: MatchedWay) => w.name || `way ${w.way_id}`;
const BUSY = new Set(['busy', 'very_busy']);

export class ReportAnalyser {
  constructor(
    private readonly engine: EngineService,
    private readonly repos: Repositories,
  ) {}

  /** The city whose coverage holds the point. */
  cityOf(p: [number, number]): LoadedCity | undefined {
    return this.engine.cities().find((c) => c.coverage.some((a) => contains(a, p)));
  }

  async analyse(r: ReportRecord): Promise<Outcome> {
    const started = Date.now();
    const { reading, by } = classify(r.issueType, r.issueSubtype, r.description);
    const city = this.cityOf(r.location);
    const base = { reading, classified_by: by };
    if (!city) {
      return {
        status: 'closed',
        summary: 'Closed: outside every routed city (the report is stored only)',
        city: null,
        analysis: { ...base, took_ms: Date.now() - started },
        proposal: null,
        duplicateOf: null,
      };
    }
    let ways = await nearbyWays(city, r.location, MATCH_RADIUS_M);
    if (r.roadName) {
      // A named road wins over a nearer unnamed one.
      const want = normalise(r.roadName);
      const named = ways.filter((w) => normalise(w.name).includes(want) || want.includes(normalise(w.name)));
      if (named.length > 0) ways = [...named, ...ways.filter((w) => !named.includes(w))];
    }
    const analysis: Record<string, unknown> = { ...base, matched_ways: ways.slice(0, 5) };
    const done = (o: Omit<Outcome, 'city' | 'analysis'>): Outcome => ({
      ...o,
      city: city.id,
      analysis: { ...analysis, took_ms: Date.now() - started },
    });
    const way = ways[0];

    if (reading === 'road_missing') {
      return done({
        status: 'in_review',
        summary: 'In review: the map lacks a road here; a map edit is needed (no routing change proposed)',
        proposal: null,
        duplicateOf: null,
      });
    }
    if (!way) {
      return done({
        status: 'closed',
        summary: `Closed: not reproducible, no routable road within ${MATCH_RADIUS_M} m of the reported location`,
        proposal: null,
        duplicateOf: null,
      });
    }

    const dup = this.duplicateOf(r, city.id, way.way_id);
    if (dup) {
      return done({
        status: 'closed',
        summary: `Closed: duplicate of report #${dup.id} on ${label(way)}, which is ${dup.status.replace('_', ' ')}`,
        proposal: null,
        duplicateOf: dup.id,
      });
    }

    const inForce = this.changesOn(city.id, way.way_id);
    analysis.changes_in_force = inForce;
    const seen = seenRoute(r.seenRoute);
    if (seen && (reading.startsWith('better_route') || reading === 'instructions')) {
      const check = await this.checkRoute(city, seen, r.location);
      analysis.route_check = check;
      if (check.passes_location === false) {
        return done({
          status: 'closed',
          summary:
            'Closed: not reproducible, today’s route between the same points no longer passes the reported place',
          proposal: null,
          duplicateOf: null,
        });
      }
      if (reading.startsWith('better_route') && check.same_as_seen === false) {
        return done({
          status: 'closed',
          summary: 'Closed: already fixed, routing between the same points now takes a different way',
          proposal: null,
          duplicateOf: null,
        });
      }
    }

    const blockedInGraph = way.forward_bike === 'no' && way.backward_bike === 'no';
    switch (reading) {
      case 'blocked_permanent':
      case 'blocked_temporary': {
        if (blockedInGraph || inForce.closed) {
          return done({
            status: 'closed',
            summary: `Closed: already fixed, routing already avoids ${label(way)}`,
            proposal: null,
            duplicateOf: null,
          });
        }
        if (reading === 'blocked_permanent') {
          return this.propose(done, { kind: 'close_way', way_ids: [way.way_id], direction: 'both' }, way);
        }
        const now = nowLocal(city.timezone);
        const end = (Math.floor(now / 1440) + 1 + TEMPORARY_DAYS) * 1440;
        return this.propose(
          done,
          {
            kind: 'window',
            way_ids: [way.way_id],
            severity: 'closed',
            schedule: { kind: 'once', start: localDateTimeOf(now), end: localDateTimeOf(end) },
            name: way.name,
            notes: `Rider report #${r.id}: ${r.issueSubtype ?? r.issueType}`.slice(0, 2000),
          },
          way,
        );
      }
      case 'one_way': {
        if (way.forward_bike === 'no' || way.backward_bike === 'no' || inForce.closed) {
          return done({
            status: 'closed',
            summary: `Closed: already fixed, routing already rides ${label(way)} one way only`,
            proposal: null,
            duplicateOf: null,
          });
        }
        // OSM's one-way convention is the drawing direction; the reviewer flips it when wrong.
        return this.propose(done, { kind: 'close_way', way_ids: [way.way_id], direction: 'backward' }, way);
      }
      case 'turn_ban': {
        // From the way the rider came on to the way they were sent onto: read off the seen route
        // around the place when sent, else the two nearest ways (the reviewer confirms the order).
        const [from, to] = seen
          ? await this.turnAlong(city, seen, r.location)
          : [way, ways.find((w) => w.way_id !== way.way_id)];
        if (!from || !to || from.way_id === to.way_id) {
          return done({
            status: 'in_review',
            summary: `In review: a turn near ${label(way)} is reported illegal; no second road found to name it`,
            proposal: null,
            duplicateOf: null,
          });
        }
        return this.propose(
          done,
          { kind: 'forbid_turn', from_way_id: from.way_id, to_way_id: to.way_id },
          way,
        );
      }
      case 'unsafe_traffic':
        if (BUSY.has(way.forward_class) && BUSY.has(way.backward_class)) {
          return done({
            status: 'closed',
            summary: `Closed: already fixed, ${label(way)} is already rated busy and SuperSafe routing avoids it`,
            proposal: null,
            duplicateOf: null,
          });
        }
        return this.propose(
          done,
          { kind: 'reweight_way', way_ids: [way.way_id], factor: FACTORS[reading] as number },
          way,
        );
      case 'unsafe_lane':
      case 'pedestrians':
      case 'rough':
      case 'hilly':
      case 'better_route_quieter':
      case 'better_route_faster':
        if (inForce.factor !== 1) {
          return done({
            status: 'closed',
            summary: `Closed: already fixed, a weighting change on ${label(way)} is in force`,
            proposal: null,
            duplicateOf: null,
          });
        }
        return this.propose(
          done,
          { kind: 'reweight_way', way_ids: [way.way_id], factor: FACTORS[reading] as number },
          way,
        );
      case 'instructions':
        return done({
          status: 'in_review',
          summary: `In review: guidance near ${label(way)} (no routing change proposed)`,
          proposal: null,
          duplicateOf: null,
        });
      case 'unclassified':
        return done({
          status: 'in_review',
          summary: `In review: no rule classifies this report; a reviewer reads it (${label(way)})`,
          proposal: null,
          duplicateOf: null,
        });
    }
  }

  private propose(
    done: (o: Omit<Outcome, 'city' | 'analysis'>) => Outcome,
    spec: ChangeSpec,
    way: MatchedWay,
  ): Outcome {
    changeSchema.parse(spec);
    return done({
      status: 'in_review',
      summary: `In review: proposed ${describeChange(spec, label(way))}`,
      proposal: spec,
      duplicateOf: null,
    });
  }

  /** The ways a seen route travels 25 m before and after the point of the route nearest `p`. */
  private async turnAlong(
    city: LoadedCity,
    route: [number, number][],
    p: [number, number],
  ): Promise<[MatchedWay | undefined, MatchedWay | undefined]> {
    let at = 0;
    for (let i = 1; i < route.length; i++) {
      if (
        distanceToLine(p, [route[i] as number[], route[i] as number[]]) <
        distanceToLine(p, [route[at] as number[], route[at] as number[]])
      )
        at = i;
    }
    const walk = (dir: -1 | 1): [number, number] => {
      let left = 25;
      let i = at;
      while (i + dir >= 0 && i + dir < route.length) {
        const a = route[i] as [number, number];
        const b = route[i + dir] as [number, number];
        const d = distanceToLine(a, [b, b]);
        if (d >= left) return [a[0] + ((b[0] - a[0]) * left) / d, a[1] + ((b[1] - a[1]) * left) / d];
        left -= d;
        i += dir;
      }
      return route[i] as [number, number];
    };
    const [before] = await nearbyWays(city, walk(-1), 15);
    const [after] = await nearbyWays(city, walk(1), 15);
    return [before, after];
  }

  /** An older open report near this one on the same way. */
  private duplicateOf(r: ReportRecord, city: string, wayId: number): ReportRecord | undefined {
    return this.repos.reports
      .open(city)
      .find(
        (o) =>
          o.id < r.id &&
          o.status === 'in_review' &&
          o.duplicateOf === null &&
          ((o.analysis?.matched_ways as MatchedWay[] | undefined)?.[0]?.way_id ?? -1) === wayId &&
          distanceToLine(r.location, [o.location, o.location]) <= DUPLICATE_RADIUS_M,
      );
  }

  /** Whether active changes already close the way or re-weight it, and the disruptions on it. */
  private changesOn(city: string, wayId: number): { closed: boolean; factor: number; ids: number[] } {
    let closed = false;
    let factor = 1;
    const ids: number[] = [];
    for (const ch of this.repos.reports.changes({ city, status: 'active' })) {
      const s = ch.spec as { kind: string; way_ids?: number[]; direction?: string; factor?: number };
      if (!s.way_ids?.includes(wayId)) continue;
      if (s.kind === 'close_way' && s.direction === 'both') closed = true;
      if (s.kind === 'reweight_way') factor *= s.factor ?? 1;
      ids.push(ch.id);
    }
    return { closed, factor, ids };
  }

  /** Today's route between the seen route's ends, compared with the seen one. */
  private async checkRoute(
    city: LoadedCity,
    seen: [number, number][],
    location: [number, number],
  ): Promise<{
    same_as_seen: boolean | null;
    passes_location: boolean | null;
    seen_passes_location: boolean;
  }> {
    const seenPasses = distanceToLine(location, seen) <= 60;
    // The rider may have seen the day or, where the city has lighting data, the night route: the
    // seen one is "the same" as today's when it matches either.
    const regimes = city.hasLightingData ? [false, true] : [false];
    let matched: number[][] | null = null;
    let first: number[][] | null = null;
    for (const night of regimes) {
      let out = null;
      try {
        out = await city.engine.routeJson({
          coordinates: [seen[0] as [number, number], seen.at(-1) as [number, number]],
          profile: 'cycling',
          supersafe: true,
          night,
          withGeometry: true,
          departureLocalMinutes: nowLocal(city.timezone),
        });
      } catch {
        out = null;
      }
      if (!out?.geometry) continue;
      const now = pairs(out.geometry);
      first ??= now;
      // The same when every sampled point of the seen route lies within 30 m of today's.
      const step = Math.max(1, Math.floor(seen.length / 50));
      let same = true;
      for (let i = 0; i < seen.length; i += step) {
        if (distanceToLine(seen[i] as [number, number], now) > 30) {
          same = false;
          break;
        }
      }
      if (same) {
        matched = now;
        break;
      }
    }
    const now = matched ?? first;
    if (!now) return { same_as_seen: null, passes_location: null, seen_passes_location: seenPasses };
    return {
      same_as_seen: matched !== null,
      passes_location: seenPasses ? distanceToLine(location, now) <= 60 : null,
      seen_passes_location: seenPasses,
    };
  }
}

/** The optional `route` a client sends: a GeoJSON LineString (directions v2's `route.geometry`). */
function seenRoute(v: unknown): [number, number][] | null {
  const coords = (v as { coordinates?: unknown } | null)?.coordinates;
  return Array.isArray(coords) && coords.length >= 2 ? (coords as [number, number][]) : null;
}

const normalise = (s: string) =>
  s
    .toLowerCase()
    .replace(/\b(street|st|avenue|ave|road|rd|place|pl|boulevard|blvd)\b\.?/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** One line that says what a change does. */
export function describeChange(spec: ChangeSpec, way?: string): string {
  const ways = way ?? ('way_ids' in spec ? `way ${spec.way_ids.join(', ')}` : '');
  switch (spec.kind) {
    case 'close_way':
      return spec.direction === 'both'
        ? `closing ${ways} to bicycles in both directions`
        : `closing ${ways} to bicycles ${spec.direction === 'forward' ? 'along' : 'against'} the way's drawn direction`;
    case 'reweight_way':
      return spec.factor >= 1
        ? `routing around ${ways} (its cycling weight × ${spec.factor})`
        : `preferring ${ways} (its cycling weight × ${spec.factor})`;
    case 'window':
      return spec.schedule.kind === 'once'
        ? `a temporary avoidance (${spec.severity}) of ${ways} from ${spec.schedule.start.replace('T', ' ')} to ${spec.schedule.end.replace('T', ' ')}`
        : `a weekly avoidance (${spec.severity}) of ${ways} on ${spec.schedule.weekdays.join(', ')}`;
    case 'forbid_turn':
      return `forbidding the turn from way ${spec.from_way_id} to way ${spec.to_way_id}`;
    case 'weighting':
      return 'a change to the city-wide weighting model';
  }
}

/**
 * The worker: every `intervalMs`, the received reports, oldest first, analysed one by one. A report
 * whose analysis fails goes to review saying so (never retried forever).
 */
export class AnalysisWorker {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;

  constructor(
    private readonly analyser: ReportAnalyser,
    private readonly repos: Repositories,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs: number,
    /**
     * Reports this process leaves to another (cities sharded across nodes, QUIETWAY_CITIES: a
     * report in a city whose graph another node loads stays `received` for that node's worker).
     */
    private readonly elsewhere: (p: [number, number]) => boolean = () => false,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.background(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Asks for a run soon (after a submission), outside the request that asked. */
  kick(): void {
    if (this.intervalMs <= 0) return;
    setImmediate(() => this.background());
  }

  /**
   * A run from the timer: a store that cannot be read (PostgreSQL down, SQLite busy) is logged and
   * the next tick tries again; it must never become an unhandled rejection (which ends the process).
   */
  private background(): void {
    this.run().catch((err) => {
      this.log.warn({ err }, 'report analysis: the store could not be read; tried again next run');
    });
  }

  /** Analyses every waiting report; resolves when the queue is empty. */
  async run(): Promise<number> {
    if (this.running) {
      this.again = true;
      return 0;
    }
    this.running = true;
    let n = 0;
    try {
      do {
        this.again = false;
        let skipped = 0;
        for (;;) {
          const batch = this.repos.reports.received(20, skipped);
          if (batch.length === 0) break;
          for (const r of batch) {
            if (this.elsewhere(r.location)) {
              skipped++;
              continue;
            }
            let o: Outcome;
            try {
              o = await this.analyser.analyse(r);
            } catch (err) {
              this.log.error({ err, report: r.id }, 'report analysis failed');
              o = {
                status: 'in_review',
                summary: 'In review: automatic analysis failed; a reviewer reads it',
                city: null,
                analysis: { error: (err as Error).message },
                proposal: null,
                duplicateOf: null,
              };
            }
            // With several server processes, each runs a worker: the first to finish a report
            // records it; the others' outcome (and log entry) are dropped.
            if (!this.repos.reports.analysed(r.id, o)) continue;
            this.repos.reports.log({
              reportId: r.id,
              changeId: null,
              disruptionId: null,
              actor: 'analysis',
              action: o.status === 'closed' ? 'close' : 'propose',
              before: { status: r.status },
              after: { status: o.status, summary: o.summary, proposal: o.proposal },
            });
            n++;
          }
        }
      } while (this.again);
    } finally {
      this.running = false;
    }
    return n;
  }
}
