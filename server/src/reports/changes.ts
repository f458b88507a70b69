// Road changes in routing: the three kinds an accepted report (or an admin) makes, applied through the
// engine's live updates, stored, re-applied as each city's graph loads (so after a graph rebuild too,
// matched by OSM way ids) and reversible. Also keeps the engine's avoidance windows in step with the disruptions
// table (curated, imported and accepted one-off windows).
//
// - permanent road changes: `close_way` (both directions or one), `reweight_way` (re-class a way:
//   its cycling weight multiplied), `forbid_turn` (the turn from one way into another, at a junction
//   or wherever they meet, closed to cycling in the engine's turn model);
// - temporary avoidance windows: `window` (closed or avoid; one-off, stored as a disruption so
//   directions list it, or weekly);
// - model-wide weighting changes: `weighting` (a partial weighting model merged over the city's own).
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { RoadChangeRecord } from '../db/reports.js';
import type { Disruption, Repositories } from '../db/repositories.js';
import { HttpError } from '../errors.js';
import type { EngineService, LoadedCity } from '../plugins/engine.js';
import { localDate, localMinutes, zoneOffset } from '../routing/time.js';

const wayIds = z.array(z.number().int().positive()).min(1).max(500);
const localDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/, 'must be a city-local YYYY-MM-DDTHH:mm');
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

export const scheduleSchema = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('once'), start: localDateTime, end: localDateTime })
    .refine((s) => s.start < s.end, {
      message: 'end must be after start',
    }),
  z.object({
    kind: z.literal('weekly'),
    weekdays: z.array(z.enum(WEEKDAYS)).min(1),
    /** Minutes of the city-local day; an end at or before the start runs past midnight. */
    start_minute: z.number().int().min(0).max(1439),
    end_minute: z.number().int().min(0).max(1440),
  }),
]);

export const changeSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('close_way'),
    way_ids: wayIds,
    /** Relative to the OSM way's drawing direction. */
    direction: z.enum(['both', 'forward', 'backward']).default('both'),
  }),
  z.object({ kind: z.literal('reweight_way'), way_ids: wayIds, factor: z.number().min(0.1).max(100) }),
  z.object({
    kind: z.literal('forbid_turn'),
    from_way_id: z.number().int().positive(),
    via_node_id: z.number().int().positive().optional(),
    to_way_id: z.number().int().positive(),
  }),
  z.object({
    kind: z.literal('window'),
    way_ids: wayIds,
    severity: z.enum(['closed', 'avoid']),
    schedule: scheduleSchema,
    name: z.string().max(200).default(''),
    notes: z.string().max(2000).default(''),
  }),
  z.object({ kind: z.literal('weighting'), model: z.record(z.string(), z.unknown()) }),
]);
export type ChangeSpec = z.infer<typeof changeSchema>;
export type Schedule = z.infer<typeof scheduleSchema>;

export const TURN_BAN_UNMATCHED = 'the ways no longer meet in the graph: the turn ban matches no turn';

/** Local minutes since 1970 of a city-local `YYYY-MM-DDTHH:mm`. */
export const localMinutesOf = (dt: string) => Math.floor(Date.parse(`${dt}:00Z`) / 60_000);
/** City-local `YYYY-MM-DDTHH:mm` of local minutes since 1970. */
export const localDateTimeOf = (m: number) => new Date(m * 60_000).toISOString().slice(0, 16);

/** Now in a city's wall clock, as local minutes since 1970. */
export function nowLocal(timezone: string, at = Date.now()): number {
  return localMinutes({ epochMs: at, offsetMinutes: zoneOffset(timezone, at) });
}

export function todayLocal(timezone: string, dayOffset = 0, at = Date.now()): string {
  return localDate({ epochMs: at, offsetMinutes: zoneOffset(timezone, at) }, dayOffset);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `patch` merged into `base`, objects member by member. */
function deepMerge(base: unknown, patch: unknown): unknown {
  if (!isObject(base) || !isObject(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = deepMerge(base[k], v);
  return out;
}

const disruptionAvoidanceId = (n: number) => `disruption:${n}`;
const changeAvoidanceId = (id: number) => `change:${id}`;
const numberOf = (d: Disruption) => Number(d.id.slice(d.id.lastIndexOf(':') + 1));

export class RoadChanges {
  /** Each city's own weighting model (before any weighting change), JSON. */
  private readonly baseWeighting = new Map<string, string>();
  /** Bumped by every change applied, lifted or synced: caches of what routing sees key on it. */
  version = 0;
  /** Disruption avoidances registered per city: avoidance id → what it was made from. */
  private readonly registered = new Map<string, Map<string, string>>();
  /** Per city, the arcs the way changes have off the graph's own weight: arc → 'closed' or a factor. */
  private readonly arcState = new Map<string, Map<number, 'closed' | number>>();
  /** Per city, the weekly windows (change ids) registered with the engine. */
  private readonly weekly = new Map<string, Set<number>>();
  /** Per city, the weighting model and the turn bans last handed to the engine (JSON). */
  private readonly weightingApplied = new Map<string, string>();
  private readonly turnBansApplied = new Map<string, string>();

  constructor(
    private readonly engine: EngineService,
    private readonly repos: Repositories,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The loaded city; 503 while its graph is still loading, 409 when it is not loaded at all. */
  city(id: string): LoadedCity {
    const c = this.engine.city(id);
    if (c) return c;
    throw this.engine.loadingError(id) ?? new HttpError(409, `The graph of ${id} is not loaded`);
  }

  /**
   * Takes in a city as its graph loads (EngineService.onCity, before it routes): its own weighting
   * model, then every active change and disruption of it applied to its engine.
   */
  adopt(c: LoadedCity): void {
    const own = c.engine.weighting();
    this.baseWeighting.set(c.id, own);
    // What the engine starts with: its own model and no turn bans of ours.
    this.weightingApplied.set(c.id, JSON.stringify(JSON.parse(own)));
    this.turnBansApplied.set(c.id, '[]');
    for (const ch of this.repos.reports.changes({ city: c.id, status: 'active' })) {
      const flag = this.apply(c, ch);
      if (flag !== ch.flag) this.repos.reports.flagChange(ch.id, flag);
      if (flag) this.log.warn({ change: ch.id, city: c.id }, `road change flagged for review: ${flag}`);
    }
    this.syncCityDisruptions(c);
  }

  /**
   * Stores and applies a change (visible to the next query when this returns). A one-off window
   * becomes a disruption entry as well, so directions list it.
   */
  create(
    cityId: string,
    spec: ChangeSpec,
    by: string,
    origin: { reportId?: number; name?: string; notes?: string; location?: [number, number] } = {},
  ): RoadChangeRecord {
    const city = this.city(cityId);
    let disruptionId: number | null = null;
    if (spec.kind === 'window' && spec.schedule.kind === 'once') {
      const [sd, sm] = split(spec.schedule.start);
      const [ed, em] = split(spec.schedule.end);
      const d = this.repos.disruptions.create({
        source: 'curator',
        city: cityId,
        name: spec.name || origin.name || '',
        notes: spec.notes || origin.notes || '',
        severity: spec.severity,
        location: origin.location ?? [0, 0],
        startDate: sd,
        startMinute: sm,
        endDate: ed,
        endMinute: em,
        wayIds: spec.way_ids,
      });
      disruptionId = numberOf(d);
    }
    const record = this.repos.reports.createChange({
      city: cityId,
      kind: spec.kind,
      spec,
      reportId: origin.reportId ?? null,
      disruptionId,
      flag: null,
      createdBy: by,
    });
    const flag = this.apply(city, record);
    if (flag) this.repos.reports.flagChange(record.id, flag);
    if (disruptionId !== null) this.syncDisruptions(cityId);
    return this.repos.reports.change(record.id) as RoadChangeRecord;
  }

  /** Lifts a change: routing returns to the graph's own data (and to the other changes in force). */
  lift(id: number, by: string): RoadChangeRecord {
    const ch = this.repos.reports.change(id);
    if (!ch) throw new HttpError(404, 'Road change not found');
    if (ch.status !== 'active') throw new HttpError(409, 'The road change was already lifted');
    const city = this.city(ch.city);
    this.repos.reports.liftChange(id, by);
    this.version++;
    const spec = ch.spec as ChangeSpec;
    switch (spec.kind) {
      case 'close_way':
      case 'reweight_way':
        this.reapplyArcs(city, this.arcsOf(city, spec).arcs);
        break;
      case 'window':
        if (ch.disruptionId !== null) {
          this.endDisruption(ch.disruptionId, city.timezone);
        } else {
          city.engine.removeAvoidance(changeAvoidanceId(id));
          this.weekly.get(city.id)?.delete(id);
        }
        break;
      case 'weighting':
        this.applyWeighting(city);
        break;
      case 'forbid_turn':
        this.applyTurnBans(city);
        break;
    }
    return this.repos.reports.change(id) as RoadChangeRecord;
  }

  /** Ends a disruption now (city-local): it stops changing routing and drops out of responses. */
  endDisruption(n: number, timezone: string): Disruption | undefined {
    const d = this.repos.disruptions.byNumber(n);
    if (!d) return undefined;
    const end = Math.max(nowLocal(timezone), localMinutesOf(`${d.startDate}T00:00`) + d.startMinute);
    const [endDate, endMinute] = split(localDateTimeOf(end));
    const updated = this.repos.disruptions.update(n, { ...d, endDate, endMinute });
    this.syncDisruptions(d.city);
    return updated;
  }

  /**
   * Makes the city's disruption avoidances match the disruptions table: every entry with ways that
   * has not ended becomes a one-off window on them (the engine applies it only to departures inside
   * it, so upcoming entries never change routing before they start).
   */
  syncDisruptions(cityId: string): void {
    const city = this.engine.city(cityId);
    // A city still loading takes its disruptions in when it arrives (adopt).
    if (city) this.syncCityDisruptions(city);
  }

  private syncCityDisruptions(city: LoadedCity): void {
    const cityId = city.id;
    this.version++;
    let reg = this.registered.get(cityId);
    if (!reg) {
      reg = new Map();
      this.registered.set(cityId, reg);
    }
    const now = nowLocal(city.timezone);
    const want = new Map<string, Disruption>();
    for (const d of this.repos.disruptions.list(cityId, todayLocal(city.timezone, -1))) {
      const start = localMinutesOf(`${d.startDate}T00:00`) + d.startMinute;
      const end = localMinutesOf(`${d.endDate}T00:00`) + d.endMinute;
      // Ended ones (an entry ended before it began keeps end = start) are left out.
      if (d.wayIds.length > 0 && end > now && end > start) want.set(disruptionAvoidanceId(numberOf(d)), d);
    }
    for (const id of reg.keys()) {
      if (!want.has(id)) {
        city.engine.removeAvoidance(id);
        reg.delete(id);
      }
    }
    for (const [id, d] of want) {
      const present = d.wayIds.filter((w) => city.engine.arcsOfWay(w).length > 0);
      const key = JSON.stringify([present, d.severity, d.startDate, d.startMinute, d.endDate, d.endMinute]);
      if (reg.get(id) === key) continue;
      if (present.length === 0) {
        this.log.warn({ disruption: d.id }, 'disruption matches no way of the graph: not applied to routing');
        city.engine.removeAvoidance(id);
        reg.delete(id);
        continue;
      }
      try {
        city.engine.addAvoidance({
          id,
          wayIds: present,
          severity: d.severity,
          schedule: {
            kind: 'once',
            start: localMinutesOf(`${d.startDate}T00:00`) + d.startMinute,
            end: localMinutesOf(`${d.endDate}T00:00`) + d.endMinute,
          },
        });
        reg.set(id, key);
      } catch (err) {
        this.log.error({ disruption: d.id }, `disruption not applied to routing: ${(err as Error).message}`);
      }
    }
  }

  /**
   * Brings a city's engine in step with the database after another process (or this one) wrote
   * road changes or disruptions (reports/sync.ts): only what differs from what the engine has is
   * handed to it, so a re-sync after this process's own write costs a few reads. Flags are left to
   * the process that made the change.
   */
  resync(cityId: string): void {
    const city = this.engine.city(cityId);
    // A city still loading reads the database as it arrives (adopt).
    if (!city) return;
    this.version++;
    const active = this.repos.reports.changes({ city: cityId, status: 'active' });
    // Way changes: every arc whose wanted state differs from the one the engine has.
    const want = new Map<number, 'closed' | number>();
    for (const ch of active) {
      const parsed = changeSchema.safeParse(ch.spec);
      if (!parsed.success) continue;
      const s = parsed.data;
      if (s.kind !== 'close_way' && s.kind !== 'reweight_way') continue;
      for (const a of this.arcsOf(city, s).arcs) {
        const had = want.get(a);
        if (s.kind === 'close_way' || had === 'closed') want.set(a, 'closed');
        else want.set(a, (had ?? 1) * s.factor);
      }
    }
    const state = this.arcState.get(cityId) ?? new Map<number, 'closed' | number>();
    const differ = new Set<number>();
    for (const [a, v] of want) if (state.get(a) !== v) differ.add(a);
    for (const a of state.keys()) if (!want.has(a)) differ.add(a);
    this.reapplyArcs(city, [...differ]);
    // Weekly windows: change ids are immutable, so presence is all there is to compare.
    const weekly = this.weekly.get(cityId) ?? new Set<number>();
    const activeIds = new Set(active.map((ch) => ch.id));
    for (const id of [...weekly]) {
      if (!activeIds.has(id)) {
        city.engine.removeAvoidance(changeAvoidanceId(id));
        weekly.delete(id);
      }
    }
    for (const ch of active) {
      if (ch.kind === 'window' && ch.disruptionId === null && !weekly.has(ch.id)) this.apply(city, ch);
    }
    try {
      this.applyWeighting(city);
    } catch (err) {
      this.log.error({ city: cityId }, `weighting not applied: ${(err as Error).message}`);
    }
    this.applyTurnBans(city);
    this.syncDisruptions(cityId);
  }

  /** Applies a stored change to a city's engine; the flag to record (null when applied whole). */
  private apply(city: LoadedCity, ch: RoadChangeRecord): string | null {
    this.version++;
    const parsed = changeSchema.safeParse(ch.spec);
    if (!parsed.success) return `stored change is not valid: ${parsed.error.issues[0]?.message}`;
    const spec = parsed.data;
    switch (spec.kind) {
      case 'close_way':
      case 'reweight_way': {
        const { arcs, missing } = this.arcsOf(city, spec);
        this.reapplyArcs(city, arcs);
        return missingFlag(missing, spec.way_ids.length);
      }
      case 'window': {
        const missing = spec.way_ids.filter((w) => city.engine.arcsOfWay(w).length === 0);
        if (ch.disruptionId !== null) return missingFlag(missing, spec.way_ids.length);
        const present = spec.way_ids.filter((w) => !missing.includes(w));
        if (present.length > 0 && spec.schedule.kind === 'weekly') {
          const s = spec.schedule;
          city.engine.addAvoidance({
            id: changeAvoidanceId(ch.id),
            wayIds: present,
            severity: spec.severity,
            schedule: {
              kind: 'weekly',
              weekdays: s.weekdays.reduce((m, d) => m | (1 << WEEKDAYS.indexOf(d)), 0),
              startMinute: s.start_minute,
              endMinute: s.end_minute,
            },
          });
          let weekly = this.weekly.get(city.id);
          if (!weekly) {
            weekly = new Set();
            this.weekly.set(city.id, weekly);
          }
          weekly.add(ch.id);
        }
        return missingFlag(missing, spec.way_ids.length);
      }
      case 'weighting':
        try {
          this.applyWeighting(city);
        } catch (err) {
          return `weighting not applied: ${(err as Error).message}`;
        }
        return null;
      case 'forbid_turn': {
        this.applyTurnBans(city);
        return this.turnBanMatches(city, spec) ? null : TURN_BAN_UNMATCHED;
      }
    }
  }

  /** The directed arcs a way change touches, and the ways the graph no longer has. */
  private arcsOf(
    city: LoadedCity,
    spec: { way_ids: number[]; direction?: 'both' | 'forward' | 'backward' },
  ): { arcs: number[]; missing: number[] } {
    const arcs: number[] = [];
    const missing: number[] = [];
    for (const w of spec.way_ids) {
      const found = city.engine.arcsOfWay(w);
      if (found.length === 0) missing.push(w);
      // Arc 2e runs along the way's drawing (forward), 2e + 1 against it.
      for (const a of found) {
        if (spec.direction === 'forward' && a % 2 === 1) continue;
        if (spec.direction === 'backward' && a % 2 === 0) continue;
        arcs.push(a);
      }
    }
    return { arcs, missing };
  }

  /**
   * Sets each arc to what the active way changes together make of it: closed if any closes it,
   * else the product of their factors, else the graph's own weight.
   */
  private reapplyArcs(city: LoadedCity, arcs: number[]): void {
    if (arcs.length === 0) return;
    const wanted = new Set(arcs);
    const closed = new Set<number>();
    const factor = new Map<number, number>();
    for (const ch of this.repos.reports.changes({ city: city.id, status: 'active' })) {
      const spec = changeSchema.safeParse(ch.spec);
      if (!spec.success) continue;
      const s = spec.data;
      if (s.kind !== 'close_way' && s.kind !== 'reweight_way') continue;
      for (const a of this.arcsOf(city, s).arcs) {
        if (!wanted.has(a)) continue;
        if (s.kind === 'close_way') closed.add(a);
        else factor.set(a, (factor.get(a) ?? 1) * s.factor);
      }
    }
    let state = this.arcState.get(city.id);
    if (!state) {
      state = new Map();
      this.arcState.set(city.id, state);
    }
    for (const arc of wanted) {
      if (closed.has(arc)) state.set(arc, 'closed');
      else if (factor.has(arc)) state.set(arc, factor.get(arc) as number);
      else state.delete(arc);
    }
    city.engine.updateArcs(
      [...wanted].map((arc) =>
        closed.has(arc)
          ? { arc, kind: 'closed' }
          : factor.has(arc)
            ? { arc, kind: 'factor', factor: factor.get(arc) as number }
            : { arc, kind: 'reset' },
      ),
    );
  }

  /** Hands the engine every active turn ban of the city (it replaces the set it had). */
  private applyTurnBans(city: LoadedCity): void {
    const bans = [];
    for (const ch of this.repos.reports.changes({ city: city.id, status: 'active' })) {
      const spec = changeSchema.safeParse(ch.spec);
      if (spec.success && spec.data.kind === 'forbid_turn') {
        const s = spec.data;
        bans.push({ fromWayId: s.from_way_id, viaNodeId: s.via_node_id, toWayId: s.to_way_id });
      }
    }
    const json = JSON.stringify(bans);
    // Unchanged (a re-sync): the engine keeps the set it has.
    if (this.turnBansApplied.get(city.id) === json) return;
    city.engine.setTurnBans(bans);
    this.turnBansApplied.set(city.id, json);
  }

  /** Whether one ban matches a turn of the graph (its ways still meet). */
  private turnBanMatches(
    city: LoadedCity,
    s: { from_way_id: number; to_way_id: number; via_node_id?: number | undefined },
  ): boolean {
    return city.engine.arcsOfWay(s.from_way_id).length > 0 && city.engine.arcsOfWay(s.to_way_id).length > 0;
  }

  /** The city's own model with every active weighting change merged over it, oldest first. */
  private applyWeighting(city: LoadedCity): void {
    let model: unknown = JSON.parse(this.baseWeighting.get(city.id) ?? city.engine.weighting());
    for (const ch of this.repos.reports.changes({ city: city.id, status: 'active' })) {
      if (ch.kind === 'weighting') model = deepMerge(model, (ch.spec as { model: unknown }).model);
    }
    const json = JSON.stringify(model);
    // Unchanged (a re-sync): no new customization of the city's metrics.
    if (this.weightingApplied.get(city.id) === json) return;
    city.engine.setWeighting(json);
    this.weightingApplied.set(city.id, json);
  }
}

const split = (dt: string): [string, number] => {
  const [date = '', time = '00:00'] = dt.split('T');
  const [h = 0, m = 0] = time.split(':').map(Number);
  return [date, h * 60 + m];
};

function missingFlag(missing: number[], total: number): string | null {
  if (missing.length === 0) return null;
  return missing.length === total
    ? `every way of the change vanished from the graph (${missing.join(', ')}): not applied`
    : `ways vanished from the graph (${missing.join(', ')}): applied to the others`;
}
