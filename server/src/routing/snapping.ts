// The snap radius, one rule for every routing endpoint (directions v2 and v1, multi-modal, explain):
// a waypoint that joins the network farther than `EngineService.snapRadiusM` from where it was asked
// for has no route. The engine snaps up to 1,000 m away (to the well-connected network first), which
// at the edge of an extract or across a hole in its data means a route from somewhere else; the rule
// turns that into the spec's no-route outcome (200, `route: null`), still reporting where each point
// would have snapped, and notes in the log a request inside the city's polygon that its data does not
// reach.

import { native } from '../native.js';
import type { LoadedCity } from '../plugins/engine.js';

/** A waypoint as the API reports it: where the engine snapped it. */
export interface SnappedPoint {
  name: string;
  location: number[];
}

/** What the routing layer needs of the engine service to apply the rule. */
export interface SnapRule {
  snapRadiusM: number;
  log: { info(obj: object, msg: string): void };
}

/**
 * The rule: metres from each requested point to where it snapped, and whether every one lies within
 * the radius. `snapped[i]` null (nothing to snap to) is outside it.
 */
export function checkSnapRadius(
  radiusM: number,
  requested: readonly (readonly number[])[],
  snapped: readonly (SnappedPoint | null)[],
): { within: boolean; distances: (number | null)[] } {
  const { haversineMeters } = native();
  const distances = requested.map((p, i) => {
    const s = snapped[i];
    return s ? haversineMeters([p[0] as number, p[1] as number], s.location) : null;
  });
  return { within: distances.every((d) => d !== null && d <= radiusM), distances };
}

/**
 * Where each point would have snapped, by the engine's own snapping (a route from the point to
 * itself, so the same metric and preferences apply); null for a point with no road within the
 * engine's reach.
 */
export async function wouldSnap(
  city: LoadedCity,
  coordinates: readonly (readonly number[])[],
  profile: 'cycling' | 'walking',
): Promise<(SnappedPoint | null)[]> {
  return Promise.all(
    coordinates.map(async (p) => {
      const point = [p[0] as number, p[1] as number];
      const out = await city.engine.routeJson({ coordinates: [point, point], profile }).catch(() => null);
      const w = out?.waypoints[0];
      return w ? { name: w.name, location: w.location } : null;
    }),
  );
}

/**
 * The waypoints a no-route answer reports (every point's snap, or none when one has nothing to snap
 * to), noting in the log when a point lies beyond the radius: inside the city's polygon (the city was
 * chosen by it) but outside the data its graph holds.
 */
export function noRouteWaypoints(
  rule: SnapRule,
  city: LoadedCity,
  requested: readonly (readonly number[])[],
  snapped: readonly (SnappedPoint | null)[],
): SnappedPoint[] {
  const { within, distances } = checkSnapRadius(rule.snapRadiusM, requested, snapped);
  if (!within) {
    const [minX, minY, maxX, maxY] = city.dataBbox;
    rule.log.info(
      {
        city: city.id,
        // To about 100 m: enough to see where the data ends, no more of the rider's trip.
        coordinates: requested.map((p) => p.map((v) => Math.round(v * 1000) / 1000)),
        snapDistancesM: distances.map((d) => (d === null ? null : Math.round(d))),
        snapRadiusM: rule.snapRadiusM,
        outsideDataBbox: requested.some(([x = 0, y = 0]) => x < minX || x > maxX || y < minY || y > maxY),
        dataBbox: city.dataBbox,
        polygonShare: city.dataCoverage?.polygon_share ?? null,
      },
      `no route: a waypoint inside ${city.name}'s coverage lies outside the data its graph holds (no routable way within ${rule.snapRadiusM} m)`,
    );
  }
  const all = snapped.every((s) => s !== null);
  return all ? snapped.map((s) => ({ name: s?.name ?? '', location: s?.location ?? [] })) : [];
}
