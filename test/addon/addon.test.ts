import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../addon/index.js';
import { native } from '../../server/src/native.js';
import { buildGraph, FIXTURES, tempDir } from '../helpers.js';

describe('native addon basics', () => {
  it('reports the engine crate version', () => {
    const cargo = fs.readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8');
    const version = /^version = "([^"]+)"/m.exec(cargo)?.[1];
    expect(native().engineVersion()).toBe(version);
  });

  it('computes a great-circle distance in Rust', () => {
    const d = native().haversineMeters([-73.9903, 40.7359], [-73.9973, 40.7308]);
    expect(d).toBeGreaterThan(790);
    expect(d).toBeLessThan(850);
  });

  it('turns bad arguments into JS errors', () => {
    expect(() => native().haversineMeters([200, 0], [0, 0])).toThrow(
      /from must be a \[longitude, latitude\]/,
    );
  });
});

// test/fixtures/junctions.osm: a 3×3 grid on the Lower East Side (see the drawing in the file).
const QUIET_STREET_NEAR_N2: [number, number] = [-73.9891, 40.72];
const TOP_STREET_NEAR_N8: [number, number] = [-73.9889, 40.722];
const MAIN_AVE_BETWEEN_N4_N5: [number, number] = [-73.9895, 40.721];
const MIDDLE_PATH_BETWEEN_N5_N8: [number, number] = [-73.989, 40.7215];

describe('engine on the junction fixture', () => {
  let engine: Engine;
  let graphFile: string;
  beforeAll(async () => {
    graphFile = buildGraph('nyc', [path.join(FIXTURES, 'junctions.osm')], tempDir());
    engine = await native().loadCity(graphFile);
  });

  it('loads a graph and reports its city', () => {
    const s = engine.stats();
    expect(s.id).toBe('nyc');
    expect(s.timezone).toBe('America/New_York');
    expect(s.hasLightingData).toBe(true);
    expect(s.graphVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(s.areaNames).toContain('Manhattan');
    expect(s.memoryBytes).toBeGreaterThan(0);
  });

  it('routes asynchronously and describes every arc', async () => {
    const r = await engine.route({
      coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8],
      profile: 'cycling',
      supersafe: true,
      arcDetails: true,
    });
    expect(r).not.toBeNull();
    const leg = r!.legs[0]!;
    expect(leg.distance).toBeGreaterThan(200);
    expect(leg.distance).toBeLessThan(300);
    // 15 km/h.
    expect(leg.duration).toBeCloseTo(leg.distance / (15 / 3.6), 0);
    // Up the signed Middle Path, the SuperSafe choice.
    expect(leg.arcs.some((a) => a.name === 'Middle Path' && a.safetyClass === 'cycleway')).toBe(true);
    expect(leg.arcs.find((a) => a.name === 'Middle Path')?.cycleRoutes).toEqual(['Test Greenway']);
    expect([...leg.geometry.slice(0, 2)]).toEqual(r!.waypoints[0]!.location);
    expect([...leg.arcIds]).toEqual(leg.arcs.map((a) => a.arc));
    // Guidance: a departure, then the arrival.
    expect(leg.steps[0]!.kind).toBe('depart');
    expect(leg.steps.at(-1)!.kind).toBe('arrive');
    expect(r!.waypoints[0]!.name).toBe('Quiet Street');
    expect(leg.elevationGain).toBe(0);
  });

  it('obeys the no-left-turn restriction for bicycles', async () => {
    // Eastbound on Main Avenue, the left turn at node 5 onto Middle Path northbound is forbidden:
    // the direct turn would be two pieces and about 100 m.
    const ride = await engine.route({
      coordinates: [MAIN_AVE_BETWEEN_N4_N5, MIDDLE_PATH_BETWEEN_N5_N8],
      profile: 'cycling',
      arcDetails: true,
    });
    const leg = ride!.legs[0]!;
    expect(leg.arcs.map((a) => a.wayId)).not.toEqual([102, 105]);
    expect(leg.distance).toBeGreaterThan(150);
  });

  it('applies an avoidance only inside its window and only to cycling', async () => {
    const req = {
      coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8],
      profile: 'cycling',
      arcDetails: true,
    };
    const before = await engine.route(req);
    const count = engine.addAvoidance({
      id: 'works',
      wayIds: [105],
      severity: 'closed',
      schedule: { kind: 'once', start: 1000, end: 2000 },
    });
    expect(count).toBeGreaterThan(0);
    const during = await engine.route({ ...req, departureLocalMinutes: 1500 });
    const after = await engine.route({ ...req, departureLocalMinutes: 2500 });
    const walking = await engine.route({ ...req, profile: 'walking', departureLocalMinutes: 1500 });
    expect(during!.legs[0]!.arcs.some((a) => a.wayId === 105)).toBe(false);
    expect(during!.legs[0]!.distance).toBeGreaterThan(before!.legs[0]!.distance);
    expect(after!.legs[0]!.distance).toBeCloseTo(before!.legs[0]!.distance, 3);
    expect(walking!.legs[0]!.arcs.some((a) => a.wayId === 105)).toBe(false); // cycleway: no foot access
    expect(engine.removeAvoidance('works')).toBe(true);
    expect(engine.removeAvoidance('works')).toBe(false);
  });

  it('finds the nearest targets by network cost', async () => {
    const found = await engine.oneToMany({
      origin: QUIET_STREET_NEAR_N2,
      targets: [TOP_STREET_NEAR_N8, [-73.9881, 40.72], [-73.9, 40.7]],
      k: 2,
      profile: 'cycling',
    });
    expect(found.map((f) => f.index)).toEqual([1, 0]);
    expect(found[0]!.cost).toBeLessThan(found[1]!.cost);
  });

  it('changes arc weights live', async () => {
    const req = {
      coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8],
      profile: 'cycling',
      arcDetails: true,
    };
    const arcs = engine.arcsOfWay(105);
    engine.updateArcs(arcs.map((arc) => ({ arc, kind: 'closed' })));
    const closed = await engine.route(req);
    expect(closed!.legs[0]!.arcs.some((a) => a.wayId === 105)).toBe(false);
    engine.updateArcs(arcs.map((arc) => ({ arc, kind: 'reset' })));
    const reopened = await engine.route(req);
    expect(reopened!.legs[0]!.arcs.some((a) => a.wayId === 105)).toBe(true);
  });

  it('refuses bad requests with clear errors', () => {
    expect(() => engine.route({ coordinates: [QUIET_STREET_NEAR_N2], profile: 'cycling' })).toThrow(
      /2 to 25 waypoints/,
    );
    expect(() =>
      engine.route({ coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8], profile: 'flying' }),
    ).toThrow(/profile must be cycling or walking/);
    expect(() => engine.route({ coordinates: [QUIET_STREET_NEAR_N2, [0, 95]], profile: 'cycling' })).toThrow(
      /coordinates\[1\]/,
    );
    expect(() =>
      engine.route({
        coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8],
        profile: 'cycling',
        bearing: 360,
      }),
    ).toThrow(/bearing/);
    expect(() =>
      engine.addAvoidance({ id: 'x', wayIds: [999999], severity: 'closed', schedule: { kind: 'always' } }),
    ).toThrow(/no arc/);
    expect(() => engine.setWeighting('{"cycling_speed_kmh": 0}')).toThrow(/weighting model/);
  });

  it("words the route as v2 JSON, alone or as a whole response body with the caller's tail", async () => {
    const input = {
      coordinates: [QUIET_STREET_NEAR_N2, TOP_STREET_NEAR_N8],
      profile: 'cycling',
      supersafe: true,
    };
    const r = await engine.routeJson({ ...input, withGeometry: true, withArcIds: true });
    const route = JSON.parse(r!.routeJson.toString('utf8'));
    expect(route.steps[0].maneuver.type).toBe('Start');
    expect(route.steps.at(-1).maneuver.type).toBe('Arrive');
    expect(r!.geometry!.length).toBe(2 * route.geometry.coordinates.length);
    expect(r!.arcIds!.length).toBeGreaterThan(0);
    // Geometry and arc ids only when asked for.
    const lean = await engine.routeJson(input);
    expect(lean!.geometry).toBeUndefined();
    expect(lean!.arcIds).toBeUndefined();
    const body = await engine.directionsResponse(
      input,
      ',"search_id":"s","metadata":{"note":"\\"quoted\\""}}',
    );
    const whole = JSON.parse(body!.toString('utf8'));
    expect(Object.keys(whole)).toEqual(['route', 'waypoints', 'search_id', 'metadata']);
    expect(whole.route).toEqual(route);
    expect(whole.waypoints).toEqual(r!.waypoints.map((w) => ({ name: w.name, location: w.location })));
    expect(whole.metadata.note).toBe('"quoted"');
    // Argument errors are thrown at the call, as for every engine method.
    expect(() => engine.directionsResponse(input, ',"open":1')).toThrow(/close the response/);
    expect(
      await engine.directionsResponse({ ...input, coordinates: [QUIET_STREET_NEAR_N2, [-73.5, 40.5]] }, '}'),
    ).toBeNull();
  });

  it('answers null when no route exists', async () => {
    const r = await engine.route({ coordinates: [QUIET_STREET_NEAR_N2, [-73.5, 40.5]], profile: 'cycling' });
    expect(r).toBeNull();
  });

  it('refuses a truncated or foreign graph file at load, without crashing', async () => {
    const bytes = fs.readFileSync(graphFile);
    const dir = tempDir();
    const cut = path.join(dir, 'cut.qwg');
    fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 64));
    await expect(native().loadCity(cut)).rejects.toThrow(/truncated|corrupt/);
    await expect(native().loadCity(path.join(dir, 'missing.qwg'))).rejects.toThrow(/cannot/);
    await expect(native().loadCity(path.join(FIXTURES, 'junctions.osm'))).rejects.toThrow(/bad magic/);
  });
});
