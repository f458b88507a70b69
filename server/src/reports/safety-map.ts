// Safety-map data: a city's roads from the graph itself (safety class per direction, bicycle access,
// lit flag, signed cycle routes) with the road changes and avoidances in force laid over them, as
// GeoJSON for a bbox and as Mapbox vector tiles (geojson-vt cuts, vt-pbf encodes).
import GeoJSONVT from 'geojson-vt';
import { fromGeojsonVt } from 'vt-pbf';
import type { Repositories } from '../db/repositories.js';
import type { LoadedCity } from '../plugins/engine.js';
import { type ChangeSpec, changeSchema, localMinutesOf, nowLocal, todayLocal, WEEKDAYS } from './changes.js';

/** The spec's five classes: `very_busy` is shown as `busy`. */
const apiClass = (c: string) => (c === 'very_busy' ? 'busy' : c);

export interface Overlay {
  /** `closed`, `closed_forward`, `closed_backward` or `reweighted` (permanent changes). */
  change?: string;
  factor?: number;
  /** An avoidance window in force now: `closed` or `avoid`. */
  avoidance?: 'closed' | 'avoid';
  /** The weekly avoidance windows in force now, in words (`School street: Mon–Fri 07:30–09:00`). */
  window?: string;
  disruption?: string;
}

const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const dayName = (d: string) => d.charAt(0).toUpperCase() + d.slice(1);

/** A weekly window in words: its name (or "Time window"), days and hours, and notes. */
export function describeWindow(s: {
  name: string;
  notes: string;
  schedule: { weekdays: string[]; start_minute: number; end_minute: number };
}): string {
  const days = WEEKDAYS.flatMap((d, i) => (s.schedule.weekdays.includes(d) ? [i] : []));
  // Runs of three or more days are written as ranges (Mon–Fri).
  const runs: string[] = [];
  for (let i = 0; i < days.length; ) {
    let j = i;
    while (j + 1 < days.length && (days[j + 1] as number) === (days[j] as number) + 1) j++;
    const a = dayName(WEEKDAYS[days[i] as number] as string);
    const b = dayName(WEEKDAYS[days[j] as number] as string);
    runs.push(j - i >= 2 ? `${a}–${b}` : j > i ? `${a}, ${b}` : a);
    i = j + 1;
  }
  const when = `${days.length === 7 ? 'daily' : runs.join(', ')} ${hhmm(s.schedule.start_minute)}–${hhmm(s.schedule.end_minute)}`;
  return `${s.name || 'Time window'}: ${when}${s.notes ? ` (${s.notes})` : ''}`;
}

/** What the changes and avoidances in force now do to each way of a city. */
export function overlays(repos: Repositories, city: LoadedCity): Map<number, Overlay> {
  const out = new Map<number, Overlay>();
  const at = (w: number) => {
    let o = out.get(w);
    if (!o) {
      o = {};
      out.set(w, o);
    }
    return o;
  };
  const now = nowLocal(city.timezone);
  for (const ch of repos.reports.changes({ city: city.id, status: 'active' })) {
    const p = changeSchema.safeParse(ch.spec);
    if (!p.success) continue;
    const s: ChangeSpec = p.data;
    if (s.kind === 'close_way') {
      for (const w of s.way_ids) at(w).change = s.direction === 'both' ? 'closed' : `closed_${s.direction}`;
    } else if (s.kind === 'reweight_way') {
      for (const w of s.way_ids) {
        const o = at(w);
        if (!o.change) o.change = 'reweighted';
        o.factor = (o.factor ?? 1) * s.factor;
      }
    } else if (s.kind === 'window' && s.schedule.kind === 'weekly' && weeklyActive(s.schedule, now)) {
      const words = describeWindow({ name: s.name, notes: s.notes, schedule: s.schedule });
      for (const w of s.way_ids) {
        const o = at(w);
        o.avoidance = worst(o.avoidance, s.severity);
        o.window = o.window ? `${o.window}; ${words}` : words;
      }
    }
  }
  for (const d of repos.disruptions.current(city.id, todayLocal(city.timezone, -1))) {
    const start = localMinutesOf(`${d.startDate}T00:00`) + d.startMinute;
    const end = localMinutesOf(`${d.endDate}T00:00`) + d.endMinute;
    if (start > now || now >= end) continue;
    for (const w of d.wayIds) {
      const o = at(w);
      o.avoidance = worst(o.avoidance, d.severity);
      o.disruption = d.id;
    }
  }
  return out;
}

const worst = (a: 'closed' | 'avoid' | undefined, b: 'closed' | 'avoid') => (a === 'closed' ? a : b);

function weeklyActive(
  s: { weekdays: string[]; start_minute: number; end_minute: number },
  now: number,
): boolean {
  const day = Math.floor(now / 1440);
  const minute = now - day * 1440;
  // 1970-01-01 was a Thursday (index 3 from Monday).
  const weekday = (d: number) => WEEKDAYS[(((d + 3) % 7) + 7) % 7] as string;
  const overnight = s.end_minute <= s.start_minute;
  if (!overnight)
    return s.weekdays.includes(weekday(day)) && minute >= s.start_minute && minute < s.end_minute;
  return (
    (s.weekdays.includes(weekday(day)) && minute >= s.start_minute) ||
    (s.weekdays.includes(weekday(day - 1)) && minute < s.end_minute)
  );
}

const bikeOf = (f: string, b: string) =>
  f === 'no' && b === 'no'
    ? 'none'
    : f === 'no'
      ? 'backward'
      : b === 'no'
        ? 'forward'
        : f === 'push' && b === 'push'
          ? 'push'
          : 'both';

export interface RoadFeature {
  type: 'Feature';
  geometry: { type: 'LineString'; coordinates: number[][] };
  properties: Record<string, string | number | boolean | null>;
}

/** The roads of a bbox as GeoJSON features, at most `limit`; `truncated` when more were there. */
export async function roadFeatures(
  city: LoadedCity,
  repos: Repositories,
  bbox: [number, number, number, number],
  limit = 20_000,
): Promise<{ features: RoadFeature[]; truncated: boolean }> {
  const segs = await city.engine.roads(bbox, limit + 1);
  const over = overlays(repos, city);
  const features: RoadFeature[] = segs.slice(0, limit).map((s) => {
    const o = over.get(s.wayId);
    const coordinates: number[][] = [];
    for (let i = 0; i < s.geometry.length; i += 2) {
      coordinates.push([
        Math.round((s.geometry[i] as number) * 1e6) / 1e6,
        Math.round((s.geometry[i + 1] as number) * 1e6) / 1e6,
      ]);
    }
    return {
      type: 'Feature',
      geometry: { type: 'LineString', coordinates },
      properties: {
        way_id: s.wayId,
        arc: s.arc,
        name: s.name,
        ref: s.ref,
        class: apiClass(s.forwardClass),
        class_backward: apiClass(s.backwardClass),
        bike: bikeOf(s.forwardBike, s.backwardBike),
        lit: s.lit,
        cycle_routes: s.cycleRoutes.join(';'),
        change: o?.change ?? null,
        factor: o?.factor ?? null,
        avoidance: o?.avoidance ?? null,
        window: o?.window ?? null,
        disruption: o?.disruption ?? null,
      },
    };
  });
  return { features, truncated: segs.length > limit };
}

/** Longitude/latitude bounds of a web-mercator tile. */
export function tileBbox(z: number, x: number, y: number): [number, number, number, number] {
  const n = 2 ** z;
  const lon = (i: number) => (i / n) * 360 - 180;
  const lat = (j: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * j) / n))) * 180) / Math.PI;
  return [lon(x), lat(y + 1), lon(x + 1), lat(y)];
}

/**
 * Below this zoom tiles are an overview: quiet and shared streets off signed routes, with no change
 * or avoidance on them, are left out (a zoom-12 tile of Manhattan would otherwise be over a megabyte).
 */
export const OVERVIEW_BELOW = 14;

const inOverview = (f: RoadFeature) => {
  const p = f.properties;
  return (
    p.cycle_routes !== '' ||
    p.change !== null ||
    p.avoidance !== null ||
    !(
      ['quiet', 'shared'].includes(p.class as string) &&
      ['quiet', 'shared'].includes(p.class_backward as string)
    )
  );
};

/** One vector tile (layer `roads`) of a city's safety map. */
export async function vectorTile(
  city: LoadedCity,
  repos: Repositories,
  z: number,
  x: number,
  y: number,
): Promise<Uint8Array> {
  const [w, s, e, n] = tileBbox(z, x, y);
  // A small margin so lines crossing the edge are cut by geojson-vt, not dropped.
  const mx = (e - w) / 16;
  const my = (n - s) / 16;
  let { features } = await roadFeatures(city, repos, [w - mx, s - my, e + mx, n + my], 50_000);
  if (z < OVERVIEW_BELOW) features = features.filter(inOverview);
  // Only the path from the top tile down to this one is cut (indexMaxZoom 0).
  const index = new GeoJSONVT({ type: 'FeatureCollection', features } as never, {
    maxZoom: z,
    indexMaxZoom: 0,
    tolerance: 3,
    buffer: 64,
  });
  const tile = index.getTile(z, x, y) ?? { features: [] };
  return fromGeojsonVt({ roads: tile }, { version: 2 });
}

/** A disruption in force now, as the public map shows it (the spec's Disruption fields). */
export interface MapDisruption {
  id: string;
  source: string;
  name: string;
  notes: string;
  severity: 'avoid' | 'closed';
  location: [number, number];
  start_date: string;
  start_minute: number;
  end_date: string;
  end_minute: number;
  way_ids: number[];
}

/** The disruptions of a city in force now (the same ones `overlays` lays over the roads). */
export function disruptionsNow(repos: Repositories, city: LoadedCity): MapDisruption[] {
  const now = nowLocal(city.timezone);
  return repos.disruptions
    .current(city.id, todayLocal(city.timezone, -1))
    .filter((d) => {
      const start = localMinutesOf(`${d.startDate}T00:00`) + d.startMinute;
      const end = localMinutesOf(`${d.endDate}T00:00`) + d.endMinute;
      return start <= now && now < end;
    })
    .map((d) => ({
      id: d.id,
      source: d.source,
      name: d.name,
      notes: d.notes,
      severity: d.severity,
      location: d.location,
      start_date: d.startDate,
      start_minute: d.startMinute,
      end_date: d.endDate,
      end_minute: d.endMinute,
      way_ids: d.wayIds,
    }));
}
