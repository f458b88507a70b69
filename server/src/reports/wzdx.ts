// The scheduled importer of a Work Zone Data Exchange feed (WZDx v4.x GeoJSON) into disruptions
// with source `wzdx`. A feed that is not valid WZDx (not JSON, not a FeatureCollection, a feature
// without an id, core details or valid dates) is rejected whole with a logged reason and the
// previous import stays in force; a partial import would silently drop works.
//
// Mapping (documented in docs/api.md): one entry per works site (features of the same road and
// dates whose shapes lie within 200 m of each other are one site); severity `closed` when every
// lane is closed, `avoid` when some lanes or a bike lane are closed; sites that leave every lane
// open are not imported. Dates are converted to the city's wall clock; the pin is the centroid of
// the site's shape; the ways are the routable ways along it.
import type { FastifyBaseLogger } from 'fastify';
import { DateTime } from 'luxon';
import { z } from 'zod';
import type { NewDisruption, Repositories } from '../db/repositories.js';
import type { EngineService, LoadedCity } from '../plugins/engine.js';
import { contains as containsPoint } from '../routing/coverage.js';
import { waysNear } from './analysis.js';
import type { RoadChanges } from './changes.js';

const position = z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)]).rest(z.number());
const geometry = z.discriminatedUnion('type', [
  z.object({ type: z.literal('LineString'), coordinates: z.array(position).min(2) }),
  z.object({ type: z.literal('MultiPoint'), coordinates: z.array(position).min(1) }),
  z.object({ type: z.literal('Point'), coordinates: position }),
  z.object({ type: z.literal('MultiLineString'), coordinates: z.array(z.array(position).min(2)).min(1) }),
]);
const isoDateTime = z.string().refine((s) => DateTime.fromISO(s, { setZone: true }).isValid, {
  message: 'is not an ISO 8601 date-time',
});

const feature = z.object({
  type: z.literal('Feature'),
  id: z.union([z.string().min(1), z.number()]),
  geometry,
  properties: z.object({
    core_details: z.object({
      event_type: z.string(),
      data_source_id: z.string().optional(),
      road_names: z.array(z.string()).default([]),
      name: z.string().optional(),
      description: z.string().optional(),
    }),
    start_date: isoDateTime,
    end_date: isoDateTime,
    vehicle_impact: z.string().default('unknown'),
    lanes: z.array(z.object({ type: z.string(), status: z.string() }).loose()).optional(),
  }),
});
const feed = z.object({
  type: z.literal('FeatureCollection'),
  features: z.array(z.unknown()),
});
type Feature = z.infer<typeof feature>;

/** Parses a feed; throws with the reason when it is not valid WZDx. */
export function parseFeed(text: string): Feature[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('feed is not JSON');
  }
  const f = feed.safeParse(json);
  if (!f.success) throw new Error('feed is not a GeoJSON FeatureCollection');
  return f.data.features.map((raw, i) => {
    const p = feature.safeParse(raw);
    if (!p.success) {
      const issue = p.error.issues[0];
      throw new Error(
        `feature ${i}: ${issue?.path.join('.') || 'feature'} ${issue?.message ?? 'is not valid'}`,
      );
    }
    return p.data;
  });
}

/** `closed`, `avoid`, or null when riders are not affected. */
export function severityOf(f: Feature): 'closed' | 'avoid' | null {
  const p = f.properties;
  const lanes = p.lanes ?? [];
  const closedLane = (l: { status: string }) => l.status === 'closed';
  if (p.vehicle_impact === 'all-lanes-closed' || (lanes.length > 0 && lanes.every(closedLane)))
    return 'closed';
  if (lanes.some((l) => l.type === 'bike-lane' && closedLane(l))) return 'avoid';
  if (
    [
      'some-lanes-closed',
      'alternating-one-way',
      'some-lanes-closed-merge-left',
      'some-lanes-closed-merge-right',
      'some-lanes-closed-split',
    ].includes(p.vehicle_impact)
  ) {
    return 'avoid';
  }
  return null;
}

function points(g: Feature['geometry']): [number, number][] {
  switch (g.type) {
    case 'Point':
      return [[g.coordinates[0], g.coordinates[1]]];
    case 'MultiPoint':
    case 'LineString':
      return g.coordinates.map((c) => [c[0], c[1]]);
    case 'MultiLineString':
      return g.coordinates.flat().map((c) => [c[0], c[1]]);
  }
}

const centroid = (pts: [number, number][]): [number, number] => {
  const [x, y] = pts.reduce(([a, b], [c, d]) => [a + c, b + d], [0, 0]);
  return [Math.round((x / pts.length) * 1e6) / 1e6, Math.round((y / pts.length) * 1e6) / 1e6];
};

const metres = ([x1, y1]: [number, number], [x2, y2]: [number, number]) =>
  Math.hypot((x2 - x1) * 111_320 * Math.cos((y1 * Math.PI) / 180), (y2 - y1) * 111_320);

/** Local date and minute of day of an ISO date-time in a zone. */
function local(iso: string, zone: string): [string, number] {
  const t = DateTime.fromISO(iso, { setZone: true }).setZone(zone);
  return [t.toISODate() as string, t.hour * 60 + t.minute];
}

interface Site {
  features: Feature[];
  pts: [number, number][];
  severity: 'closed' | 'avoid';
}

/** Features of the same road and dates whose shapes come within 200 m of each other are one site. */
function sites(features: Feature[]): Site[] {
  const out: Site[] = [];
  for (const f of features) {
    const severity = severityOf(f);
    if (!severity) continue;
    const pts = points(f.geometry);
    const p = f.properties;
    const same = out.find((s) => {
      const q = (s.features[0] as Feature).properties;
      return (
        q.start_date === p.start_date &&
        q.end_date === p.end_date &&
        (q.core_details.road_names[0] ?? '') === (p.core_details.road_names[0] ?? '') &&
        s.pts.some((a) => pts.some((b) => metres(a, b) <= 200))
      );
    });
    if (same) {
      same.features.push(f);
      same.pts.push(...pts);
      if (severity === 'closed') same.severity = 'closed';
    } else {
      out.push({ features: [f], pts, severity });
    }
  }
  return out;
}

/** The routable ways along a site: the nearest (preferring the named road) to each sampled point. */
async function waysAlong(city: LoadedCity, s: Site): Promise<number[]> {
  const names = s.features.flatMap((f) => f.properties.core_details.road_names.map((n) => n.toLowerCase()));
  const dense: [number, number][] = [];
  for (let i = 0; i < s.pts.length; i++) {
    const a = s.pts[i] as [number, number];
    dense.push(a);
    const b = s.pts[i + 1];
    if (b) {
      const n = Math.min(20, Math.floor(metres(a, b) / 25));
      for (let k = 1; k <= n; k++)
        dense.push([a[0] + ((b[0] - a[0]) * k) / (n + 1), a[1] + ((b[1] - a[1]) * k) / (n + 1)]);
    }
  }
  // One fetch of the stretches around the whole site, then the nearest to each point.
  const margin = 30 / 111_320;
  const xs = dense.map((p) => p[0]);
  const ys = dense.map((p) => p[1]);
  const k = Math.cos(((ys[0] ?? 0) * Math.PI) / 180) || 1;
  const segs = await city.engine.roads([
    Math.min(...xs) - margin / k,
    Math.min(...ys) - margin,
    Math.max(...xs) + margin / k,
    Math.max(...ys) + margin,
  ]);
  const ids = new Set<number>();
  for (const p of dense.slice(0, 500)) {
    const near = waysNear(segs, p, 20);
    const named = near.find(
      (w) =>
        names.some((n) => w.name.toLowerCase().includes(n) || n.includes(w.name.toLowerCase())) && w.name,
    );
    const pick = named ?? near[0];
    if (pick) ids.add(pick.way_id);
  }
  return [...ids];
}

export class WzdxImporter {
  private timer: NodeJS.Timeout | null = null;
  /** The last import's outcome, for /health and the admin API. */
  last: { at: string; ok: boolean; message: string } | null = null;

  constructor(
    private readonly url: string,
    private readonly intervalSeconds: number,
    private readonly engine: EngineService,
    private readonly repos: Repositories,
    private readonly changes: RoadChanges,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), this.intervalSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Fetches and imports the feed once; never throws (a failure is logged and kept in `last`). */
  async run(): Promise<boolean> {
    const at = new Date().toISOString();
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(15_000) });
      if (!res.ok) throw new Error(`feed answered HTTP ${res.status}`);
      const features = parseFeed(await res.text());
      const byCity = new Map<string, NewDisruption[]>(this.engine.cities().map((c) => [c.id, []]));
      for (const s of sites(features)) {
        const pin = centroid(s.pts);
        const city = this.engine.cities().find((c) => c.coverage.some((a) => containsPoint(a, pin)));
        if (!city) continue;
        const first = s.features[0] as Feature;
        const p = first.properties;
        const [startDate, startMinute] = local(p.start_date, city.timezone);
        const [endDate, endMinute] = local(p.end_date, city.timezone);
        (byCity.get(city.id) as NewDisruption[]).push({
          source: 'wzdx',
          city: city.id,
          name: p.core_details.road_names[0] ?? p.core_details.name ?? '',
          notes: (p.core_details.description ?? '').slice(0, 2000),
          severity: s.severity,
          location: pin,
          startDate,
          startMinute,
          endDate,
          endMinute,
          wayIds: await waysAlong(city, s),
          externalId: s.features
            .map((f) => String(f.id))
            .sort()
            .join(','),
        });
      }
      const counts = { added: 0, updated: 0, removed: 0 };
      for (const [city, entries] of byCity) {
        const c = this.repos.disruptions.replaceImported('wzdx', city, entries);
        counts.added += c.added;
        counts.updated += c.updated;
        counts.removed += c.removed;
        this.changes.syncDisruptions(city);
      }
      const message = `imported ${features.length} features: ${counts.added} added, ${counts.updated} updated, ${counts.removed} removed`;
      this.log.info({ url: this.url, ...counts }, `WZDx ${message}`);
      this.last = { at, ok: true, message };
      return true;
    } catch (err) {
      const message = (err as Error).message;
      this.log.error({ url: this.url }, `WZDx feed rejected, previous import stays in force: ${message}`);
      this.last = { at, ok: false, message };
      return false;
    }
  }
}
