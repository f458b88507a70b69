// POST /directions/: the deprecated version 1, in the Mapbox Directions v5 shape (routes, legs,
// camelCase voice and banner instructions with distanceAlongGeometry, code Ok / NoRoute). Closed to
// new integrations: API keys need the legacy_v1 flag (decisions.md).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../errors.js';
import { type PlannedRoute, pairs, plan } from '../../routing/directions.js';
import { encodePolyline, simplify } from '../../routing/polyline.js';
import { departureTime, lonLat, routingAccess } from './v2.js';

const body = z.object({
  coordinates: z.array(lonLat).min(2, 'at least 2 waypoints').max(25, 'at most 25 waypoints'),
  profile: z.enum(['cycling', 'walking', 'driving', 'driving-traffic']).default('cycling'),
  supersafe: z.boolean().default(false),
  bearing: z.number().min(0).max(360).optional(),
  departure_time: departureTime.optional(),
  nighttime: z.boolean().optional(),
  options: z
    .object({
      geometries: z.enum(['geojson', 'polyline']).default('geojson'),
      overview: z
        .union([z.enum(['full', 'simplified']), z.literal(false), z.literal('false')])
        .default('full'),
      steps: z.boolean().default(true),
      alternatives: z.boolean().default(false),
    })
    .default({ geometries: 'geojson', overview: 'full', steps: true, alternatives: false }),
});

type Options = z.infer<typeof body>['options'];

/** A v2 step as the engine writes it (see docs/api.md). */
interface ApiStep {
  distance: number;
  duration: number;
  geometry: { coordinates: number[][] };
  name: string;
  mode: string;
  safety_classification?: string;
  exits: string;
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
    primary: unknown;
    secondary?: unknown;
    sub?: unknown;
  }[];
}

/** v1's maneuver types are Mapbox's. */
function v1Maneuver(s: ApiStep) {
  const m = s.maneuver;
  const type =
    m.type === 'Start'
      ? 'depart'
      : m.type === 'Arrive'
        ? 'arrive'
        : m.type === 'U-turn'
          ? 'continue'
          : m.type.toLowerCase();
  return {
    type,
    ...(m.modifier ? { modifier: m.modifier } : {}),
    instruction: m.instruction,
    location: m.location,
    bearing_before: m.bearing_before,
    bearing_after: m.bearing_after,
    ...(s.exits ? { exit: Number(s.exits) } : {}),
  };
}

function geometryOf(coords: number[][], options: Options) {
  return options.geometries === 'polyline'
    ? encodePolyline(coords)
    : { type: 'LineString', coordinates: coords };
}

function v1Route(p: PlannedRoute, options: Options) {
  const out = p.output;
  if (!out) return null;
  const full = pairs(out.geometry ?? new Float64Array());
  const overview = options.overview === false || options.overview === 'false' ? null : options.overview;
  // The v2 steps, split into legs at each arrival.
  const all = (JSON.parse(out.routeJson.toString('utf8')) as { steps: ApiStep[] }).steps;
  const legSteps: ApiStep[][] = [[]];
  for (const s of all) {
    (legSteps[legSteps.length - 1] as ApiStep[]).push(s);
    if (s.maneuver.type === 'Arrive' && s !== all[all.length - 1]) legSteps.push([]);
  }
  const legs = legSteps.map((steps) => ({
    distance: Math.round(steps.reduce((a, s) => a + s.distance, 0) * 10) / 10,
    duration: Math.round(steps.reduce((a, s) => a + s.duration, 0) * 10) / 10,
    summary: '',
    steps: (options.steps ? steps : []).map((s) => ({
      distance: s.distance,
      duration: s.duration,
      geometry: geometryOf(s.geometry.coordinates, options),
      name: s.name,
      mode: s.mode,
      maneuver: v1Maneuver(s),
      voiceInstructions: s.voice_instructions.map((v) => ({
        distanceAlongGeometry: v.distance_along_geometry,
        announcement: v.announcement,
      })),
      bannerInstructions: s.banner_instructions.map((b) => ({
        distanceAlongGeometry: b.distance_along_geometry,
        primary: b.primary,
        secondary: b.secondary ?? null,
        ...(b.sub ? { sub: b.sub } : {}),
      })),
      ...(s.safety_classification ? { safety_classification: s.safety_classification } : {}),
      cycle_routes: s.cycle_routes,
    })),
  }));
  return {
    distance: legs.reduce((a, l) => a + l.distance, 0),
    duration: legs.reduce((a, l) => a + l.duration, 0),
    weight: legs.reduce((a, l) => a + l.duration, 0),
    weight_name: out.metric,
    ...(overview ? { geometry: geometryOf(overview === 'simplified' ? simplify(full) : full, options) } : {}),
    legs,
  };
}

/** v1 answers carry the route's geometry (polyline, overview) and its arcs (`edge_ids`). */
const V1_EXTRAS = { geometry: true, arcIds: true };

const directionsV1: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/directions/',
    {
      config: { ...routingAccess, access: { ...routingAccess.access, legacyV1: true } },
      schema: {
        tags: ['routing'],
        summary: 'Deprecated v1 directions (Mapbox Directions v5 shape); use /directions/v2/',
        deprecated: true,
        body,
      },
    },
    async (request) => {
      const req = request.body;
      if (req.profile === 'driving' || req.profile === 'driving-traffic') {
        throw new HttpError(400, 'Profile no longer supported');
      }
      const cycling = req.profile === 'cycling';
      const common = {
        coordinates: req.coordinates,
        profile: req.profile,
        // Fractional degrees are rounded; 360 is north again.
        bearing: req.bearing === undefined ? undefined : Math.round(req.bearing) % 360,
        departure_time: req.departure_time,
        nighttime: req.nighttime,
      };
      const p = await plan(app.engine, app.repos, { ...common, supersafe: req.supersafe }, V1_EXTRAS);
      const routes = [];
      const main = v1Route(p, req.options);
      if (main) routes.push(main);
      // Alternatives apply when not using SuperSafe: the SuperSafe route, when it differs.
      if (main && cycling && !req.supersafe && req.options.alternatives) {
        const alt = await plan(app.engine, app.repos, { ...common, supersafe: true }, V1_EXTRAS);
        const altRoute = v1Route(alt, req.options);
        const arcs = (x: PlannedRoute) => x.output?.arcIds?.join(',');
        if (altRoute && arcs(alt) !== arcs(p)) routes.push(altRoute);
      }
      const disruptions = p.disruptions;
      return {
        routes,
        // With no route, where each point would have snapped (the snap radius, routing/snapping.ts).
        waypoints: p.waypoints,
        code: main ? 'Ok' : 'NoRoute',
        search_id: Math.floor(Math.random() * Number.MAX_SAFE_INTEGER),
        edge_ids: p.output ? [...(p.output.arcIds ?? [])] : null,
        graph_version: cycling ? p.city.graphVersion : null,
        subtitle: p.nighttime ? 'Prefers well-lit roads' : null,
        ...(disruptions ? { disruptions } : {}),
        metadata: {
          routing_engine: 'network_router',
          profile: req.profile,
          waypoint_count: req.coordinates.length,
          nighttime: p.nighttime,
        },
      };
    },
  );
};

export default directionsV1;
