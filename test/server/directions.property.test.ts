// Property tests of the spec's step rules over at least 500 random routes on every shared city
// extract (interface spec "Step", voice and banner instructions). Seeds are printed; set QW_SEED to
// replay one.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { buildGraph, SHARED_DATA, testConfig } from '../helpers.js';

const ROUTES_PER_EXTRACT = 500;
const CLASSES = ['quiet', 'cycleway', 'moderate', 'busy', 'shared'];
const TYPES = ['Start', 'Turn', 'Continue', 'roundabout', 'U-turn', 'Arrive'];
const STOPS = ['traffic_signal', 'stop_sign', 'give_way'];
const DISTANCE_WORDS = /\d+(\.\d+)?\s*(m|meters|metres|km|kilometers|kilometres|miles?|feet|ft|yards?)\b/i;

function cityOf(file: string): string {
  if (file.startsWith('nyc-')) return 'nyc';
  if (file.startsWith('chicago-')) return 'chicago';
  if (file.startsWith('london-')) return 'london';
  if (file.startsWith('la-')) return 'los-angeles';
  if (file.includes('oakland')) return 'sf-bay-area';
  throw new Error(`shared extract ${file} belongs to no known city: teach cityOf() its city`);
}

function extracts(): string[] {
  const dir = path.join(SHARED_DATA, 'osm');
  const files = fs
    .readdirSync(dir)
    .filter((f) => /\.(osm\.pbf|osm\.bz2|osm)$/.test(f))
    .map((f) => path.join(dir, f));
  const xml = path.join(dir, 'london-xml');
  if (fs.existsSync(xml)) files.push(...fs.readdirSync(xml).map((f) => path.join(xml, f)));
  return files.sort();
}

/** Bearing in degrees from a to b. */
function bearing(a: number[], b: number[]): number {
  const r = Math.PI / 180;
  const [l1, p1, l2, p2] = [
    (a[0] as number) * r,
    (a[1] as number) * r,
    (b[0] as number) * r,
    (b[1] as number) * r,
  ];
  const y = Math.sin(l2 - l1) * Math.cos(p2);
  const x = Math.cos(p1) * Math.sin(p2) - Math.sin(p1) * Math.cos(p2) * Math.cos(l2 - l1);
  return (((Math.atan2(y, x) / r) % 360) + 360) % 360;
}

const angleDiff = (a: number, b: number) => Math.abs(((a - b + 540) % 360) - 180);

interface Step {
  distance: number;
  duration: number;
  geometry: { coordinates: number[][] };
  name: string;
  mode: string;
  safety_classification?: string;
  safety_code?: number;
  exits: string;
  lit?: boolean;
  cycle_routes: string[] | null;
  maneuver: {
    type: string;
    modifier?: string;
    instruction: string;
    location: number[];
    bearing_before: number;
    bearing_after: number;
  };
  voice_instructions: { distance_along_geometry: number; announcement: string }[];
  banner_instructions: {
    distance_along_geometry: number;
    primary: { text: string; type: string; components: { type: string }[] };
    sub?: { type: string };
  }[];
}

/** Every rule a response must keep; returns the violations. */
function check(body: Record<string, unknown>, profile: string, waypoints: number): string[] {
  const bad: string[] = [];
  const route = body.route as {
    distance: number;
    duration: number;
    steps: Step[];
    stops: { stop_type: string }[];
  } | null;
  if (typeof body.search_id !== 'string') bad.push('search_id');
  if ((profile === 'walking') !== (body.graph_version === null))
    bad.push('graph_version null exactly on walking');
  if (profile === 'walking' && 'disruptions' in body) bad.push('disruptions on walking');
  if ((body.metadata as { waypoint_count: number }).waypoint_count !== waypoints) bad.push('waypoint_count');
  if (!route) return bad;
  const steps = route.steps;
  if (steps[0]?.maneuver.type !== 'Start') bad.push('first step is Start');
  const last = steps.at(-1) as Step;
  if (last.maneuver.instruction !== 'Arrive at destination') bad.push('last step arrives');
  if (last.voice_instructions.length !== 0) bad.push('no voice on arrive');
  let sum = 0;
  steps.forEach((s, i) => {
    const where = `step ${i} (${s.maneuver.type} ${s.maneuver.instruction})`;
    sum += s.distance;
    if (!TYPES.includes(s.maneuver.type) && !s.maneuver.type.startsWith('Arrive')) bad.push(`${where}: type`);
    if (JSON.stringify(s.geometry.coordinates[0]) !== JSON.stringify(s.maneuver.location))
      bad.push(`${where}: location = geometry[0]`);
    if (s.mode !== profile) bad.push(`${where}: mode`);
    const arrive = s.maneuver.type === 'Arrive';
    if (profile === 'cycling' && !arrive) {
      if (!CLASSES.includes(s.safety_classification ?? '')) bad.push(`${where}: safety_classification`);
      if (typeof s.lit !== 'boolean') bad.push(`${where}: lit`);
    } else if (s.safety_classification !== undefined)
      bad.push(`${where}: safety_classification where none belongs`);
    if (s.maneuver.type === 'roundabout') {
      if (!/^[1-9]\d*$/.test(s.exits)) bad.push(`${where}: exit number`);
      if (!/take the \d+(st|nd|rd|th) exit/.test(s.maneuver.instruction))
        bad.push(`${where}: roundabout names the exit`);
    } else if (s.exits !== '') bad.push(`${where}: exits '' off roundabouts`);
    if (s.cycle_routes !== null && (!Array.isArray(s.cycle_routes) || s.cycle_routes.length === 0))
      bad.push(`${where}: cycle_routes`);
    if (i > 0) {
      const prev = (steps[i - 1] as Step).geometry.coordinates;
      const [a, b] = [prev.at(-2) as number[], prev.at(-1) as number[]];
      // Coordinates are rounded to 1e-6°: only segments of a few metres give a precise heading.
      const segmentM = Math.hypot(
        ((b[0] as number) - (a[0] as number)) * 84_000,
        ((b[1] as number) - (a[1] as number)) * 111_000,
      );
      if (prev.length >= 2 && segmentM > 5) {
        // bearing_before is the heading at the end of the previous step's geometry.
        if (angleDiff(s.maneuver.bearing_before, bearing(a, b)) > 10 && prev.length === 2)
          bad.push(`${where}: bearing_before`);
      }
    }
    // Voice: far to near, within the approach, imminent cue near 40 m, no distances spoken.
    const v = s.voice_instructions.map((x) => x.distance_along_geometry);
    if (!arrive && v.length === 0) bad.push(`${where}: voice instructions`);
    for (let k = 1; k < v.length; k++)
      if (!((v[k] as number) < (v[k - 1] as number))) bad.push(`${where}: voice order`);
    if (v.some((d) => d > s.distance + 0.11)) bad.push(`${where}: voice beyond the approach`);
    if (v.length > 0 && (v.at(-1) as number) > 40.01) bad.push(`${where}: imminent cue`);
    if (v.length > 1 && Math.abs((v[0] as number) - (s.distance - 25)) > 0.2)
      bad.push(`${where}: first cue 25 m in`);
    for (const x of s.voice_instructions)
      if (DISTANCE_WORDS.test(x.announcement)) bad.push(`${where}: distance spoken`);
    // Banners: one per step before arrival, primary with components, sub never previews arrival.
    if (!arrive && s.banner_instructions.length === 0) bad.push(`${where}: banner`);
    for (const b of s.banner_instructions) {
      if (!b.primary.text || b.primary.components.length === 0) bad.push(`${where}: banner primary`);
      if (b.sub && b.sub.type === 'Arrive') bad.push(`${where}: sub previews arrival`);
      const next = steps[i + 1];
      if (b.sub && next && next.distance >= 30) bad.push(`${where}: sub without a quick follow-up`);
    }
  });
  if (Math.abs(sum - route.distance) > 1 + 0.05 * steps.length)
    bad.push(`step distances ${sum} vs route ${route.distance}`);
  // A ferry takes its timetable's time, faster than riding (issue 24: ferries are routable).
  const ferry = steps.some((st) => st.maneuver.instruction.startsWith('Take the ferry'));
  if (profile === 'cycling' && !ferry && route.duration < route.distance / (15 / 3.6) - 1)
    bad.push('cycling faster than 15 km/h');
  for (const s of route.stops) if (!STOPS.includes(s.stop_type)) bad.push('stop type');
  return bad;
}

describe('directions v2: spec rules over random routes on every shared extract', () => {
  const seed = Number(process.env.QW_SEED ?? Date.now() % 1_000_000);
  for (const file of extracts()) {
    const name = path.basename(file);
    it(`${name}: ${ROUTES_PER_EXTRACT} routes keep every rule (seed ${seed})`, async () => {
      // Far more requests than a key may send per minute: lift the limit for this test.
      const config = testConfig({
        QUIETWAY_RATE_LIMITS: JSON.stringify({ directions: { key: [1_000_000, 60] } }),
      });
      const city = cityOf(path.relative(path.join(SHARED_DATA, 'osm'), file));
      buildGraph(city, [file], config.graphDir, 25);
      const app = await buildApp({ config });
      try {
        const key = issueKey(app.repos, { kind: 'app', name: 't', source: null, legacyV1: false }).key;
        const loaded = app.engine.city(city);
        if (!loaded) throw new Error(`${name}: graph not loaded`);
        const [x0, y0, x1, y1] = loaded.engine.stats().bbox as [number, number, number, number];
        let s = seed;
        const rnd = () => {
          s = (s * 1103515245 + 12345) % 2147483648;
          return s / 2147483648;
        };
        const point = () => [x0 + rnd() * (x1 - x0), y0 + rnd() * (y1 - y0)];
        let routed = 0;
        const failures: string[] = [];
        for (let attempt = 0; attempt < ROUTES_PER_EXTRACT * 4 && routed < ROUTES_PER_EXTRACT; attempt++) {
          const profile = rnd() < 0.8 ? 'cycling' : 'walking';
          const n = rnd() < 0.1 ? 3 : 2;
          const payload: Record<string, unknown> = {
            coordinates: Array.from({ length: n }, point),
            profile,
            supersafe: rnd() < 0.7,
            departure_time: `2026-${String(1 + Math.floor(rnd() * 12)).padStart(2, '0')}-1${Math.floor(rnd() * 9)}T${String(Math.floor(rnd() * 24)).padStart(2, '0')}:${String(Math.floor(rnd() * 60)).padStart(2, '0')}`,
          };
          if (rnd() < 0.15) payload.bearing = Math.floor(rnd() * 360);
          const res = await app.inject({
            method: 'POST',
            url: '/directions/v2/',
            headers: { apikey: key },
            payload,
          });
          if (res.statusCode === 400 && res.json().code === 'CROSS_CITY_ROUTE') continue;
          if (res.statusCode !== 200) {
            failures.push(`${res.statusCode} ${res.body} for ${JSON.stringify(payload)}`);
            continue;
          }
          const body = res.json();
          if (!body.route) continue;
          routed++;
          for (const f of check(body, profile, n)) failures.push(`${f} — ${JSON.stringify(payload)}`);
        }
        expect(failures.slice(0, 10)).toEqual([]);
        // Small extracts have few routable points; the big ones must reach the full count.
        expect(routed).toBeGreaterThanOrEqual(Math.min(ROUTES_PER_EXTRACT, 50));
        if (fs.statSync(file).size > 500_000) expect(routed).toBe(ROUTES_PER_EXTRACT);
      } finally {
        await app.close();
      }
    }, 180_000);
  }
});
