// The peers benchmark's engine-neutral measures: every engine's route is read against the same OSM
// ways (bench/peers/ways.py) by its geometry, so "metres on trunk, primary and secondary roads with
// no bike lane or track" means the same thing for Quietway, OSRM and Valhalla; its steps are counted
// by the rules of the route-quality benchmark (bench/rust/src/quality.rs: the arrival is no step, a
// step shorter than 15 m is short, U-turn steps counted). Metres pushed (the bike walked) are read
// from each engine's own words: OSRM's `pushing bike` mode, and Quietway's step times (ridden at
// 15 km/h, pushed at 5 km/h, docs/api.md); Valhalla's bicycle routes say none.

/** Highways counted as major roads. */
export const MAJOR = new Set([
  'trunk',
  'trunk_link',
  'primary',
  'primary_link',
  'secondary',
  'secondary_link',
]);
/** Steps shorter than this are "short" (as in route-quality-bench). */
export const SHORT_STEP_M = 15;
/** A route segment whose midpoint lies farther than this from every way is unmatched. */
const MATCH_M = 3;
const CELL = 0.0005;
const R = 6371008.8;
const RAD = Math.PI / 180;

const cellKey = (cx, cy) => cx * 1e6 + cy;
/** About 3 m in degrees (a little more in longitude at New York's latitude). */
const MATCH_DEG = 4e-5;

/** Great-circle distance in metres between two `[lon, lat]` positions. */
export function haversine(a, b) {
  const h =
    Math.sin(((b[1] - a[1]) * RAD) / 2) ** 2 +
    Math.cos(a[1] * RAD) * Math.cos(b[1] * RAD) * Math.sin(((b[0] - a[0]) * RAD) / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(h));
}

/** Local metric projection around `lat0` (metres east, north). */
function projector(lat0) {
  const kx = R * RAD * Math.cos(lat0 * RAD);
  const ky = R * RAD;
  return (p) => [p[0] * kx, p[1] * ky];
}

/**
 * A grid of the ways' segments: `{ways, cells, project}`. `ways` is the list ways.py writes
 * (`{id, hw, infra, coords}`).
 */
export function wayIndex(ways) {
  const lat0 = ways.length ? ways[0].coords[0][1] : 0;
  const project = projector(lat0);
  const cells = new Map();
  const segs = [];
  ways.forEach((w, wi) => {
    for (let i = 0; i + 1 < w.coords.length; i++) {
      const a = w.coords[i];
      const b = w.coords[i + 1];
      const s = segs.length;
      segs.push([wi, project(a), project(b)]);
      const [x0, x1] = [Math.min(a[0], b[0]), Math.max(a[0], b[0])];
      const [y0, y1] = [Math.min(a[1], b[1]), Math.max(a[1], b[1])];
      for (let cx = Math.floor(x0 / CELL); cx <= Math.floor(x1 / CELL); cx++) {
        for (let cy = Math.floor(y0 / CELL); cy <= Math.floor(y1 / CELL); cy++) {
          const k = cellKey(cx, cy);
          const list = cells.get(k);
          if (list) list.push(s);
          else cells.set(k, [s]);
        }
      }
    }
  });
  return { ways, segs, cells, project };
}

/** Distance from p to segment ab, all projected. */
function distToSegment(p, a, b) {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const l2 = dx * dx + dy * dy;
  const t = l2 === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / l2));
  return Math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy);
}

/**
 * The way a route segment from `a` to `b` (`[lon, lat]`) rides on: the nearest way segment to its
 * midpoint that runs along it (within 25°), within 3 m; `null` when none.
 */
export function wayOf(index, a, b) {
  const mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  const pm = index.project(mid);
  const pa = index.project(a);
  const pb = index.project(b);
  const len = Math.hypot(pb[0] - pa[0], pb[1] - pa[1]);
  let best = null;
  let bestD = MATCH_M;
  const [cx0, cx1] = [Math.floor((mid[0] - MATCH_DEG) / CELL), Math.floor((mid[0] + MATCH_DEG) / CELL)];
  const [cy0, cy1] = [Math.floor((mid[1] - MATCH_DEG) / CELL), Math.floor((mid[1] + MATCH_DEG) / CELL)];
  for (let cx = cx0; cx <= cx1; cx++) {
    for (let cy = cy0; cy <= cy1; cy++) {
      for (const s of index.cells.get(cellKey(cx, cy)) ?? []) {
        const [wi, sa, sb] = index.segs[s];
        const d = distToSegment(pm, sa, sb);
        if (d >= bestD) continue;
        if (len > 0.5) {
          const sl = Math.hypot(sb[0] - sa[0], sb[1] - sa[1]);
          const cos =
            ((pb[0] - pa[0]) * (sb[0] - sa[0]) + (pb[1] - pa[1]) * (sb[1] - sa[1])) / (len * sl || 1);
          if (Math.abs(cos) < Math.cos(25 * RAD)) continue;
        }
        best = index.ways[wi];
        bestD = d;
      }
    }
  }
  return best;
}

/** Metres of a route's geometry in all, on major roads, on bare major roads, and unmatched. */
export function classify(index, coords) {
  const out = { length_m: 0, major_m: 0, bare_major_m: 0, unmatched_m: 0 };
  for (let i = 0; i + 1 < coords.length; i++) {
    const m = haversine(coords[i], coords[i + 1]);
    if (m === 0) continue;
    out.length_m += m;
    const w = wayOf(index, coords[i], coords[i + 1]);
    if (!w) out.unmatched_m += m;
    else if (MAJOR.has(w.hw)) {
      out.major_m += m;
      if (!w.infra) out.bare_major_m += m;
    }
  }
  return out;
}

/** Whether `p` lies within `m` metres of a way whose highway passes `ok`. */
export function nearWay(index, p, m, ok = () => true) {
  const pp = index.project(p);
  const cx = Math.floor(p[0] / CELL);
  const cy = Math.floor(p[1] / CELL);
  const reach = Math.ceil(m / 40);
  for (let i = -reach; i <= reach; i++) {
    for (let j = -reach; j <= reach; j++) {
      for (const s of index.cells.get(cellKey(cx + i, cy + j)) ?? []) {
        const [wi, sa, sb] = index.segs[s];
        if (distToSegment(pp, sa, sb) <= m && ok(index.ways[wi].hw)) return true;
      }
    }
  }
  return false;
}

/** Decodes a Google encoded polyline of precision `1e-precision` into `[lon, lat]` pairs. */
export function decodePolyline(str, precision = 6) {
  const f = 10 ** precision;
  const out = [];
  let lat = 0;
  let lon = 0;
  let i = 0;
  while (i < str.length) {
    for (const which of [0, 1]) {
      let shift = 0;
      let result = 0;
      let byte;
      do {
        byte = str.charCodeAt(i++) - 63;
        result |= (byte & 0x1f) << shift;
        shift += 5;
      } while (byte >= 0x20);
      const d = result & 1 ? ~(result >> 1) : result >> 1;
      if (which === 0) lat += d;
      else lon += d;
    }
    out.push([lon / f, lat / f]);
  }
  return out;
}

/** Quietway's speeds (docs/api.md): ridden at 15 km/h, pushed at 5 km/h, in m/s. */
const RIDE_MS = 15 / 3.6;
const PUSH_MS = 5 / 3.6;

/**
 * Metres of a Quietway step pushed, read from its time: `duration = ridden / 15 km/h + pushed /
 * 5 km/h` (a ferry's tagged time reads as pushing, and is rare).
 */
export function quietwayPushedM(distance, duration) {
  const p = (duration - distance / RIDE_MS) / (1 / PUSH_MS - 1 / RIDE_MS);
  return Math.min(distance, Math.max(0, p));
}

/**
 * The route of one engine's answer, normalized: `{coords, steps: [{uturn, distance_m}], pushed}`
 * (the arrival left out; `pushed` the steps walked in part, `[{pushed_m, distance_m, coords}]`, or
 * null when the engine does not say), or `null` when it found none.
 */
export function normalize(engine, body) {
  if (engine === 'quietway') {
    const r = body.route;
    if (!r) return null;
    const kept = r.steps.filter((s) => s.maneuver.type !== 'Arrive');
    const steps = kept.map((s) => ({
      uturn: s.maneuver.type === 'U-turn',
      distance_m: s.distance,
      location: s.maneuver.location,
      name: s.name,
    }));
    const pushed = kept
      .map((s) => ({
        pushed_m: quietwayPushedM(s.distance, s.duration ?? s.distance / RIDE_MS),
        distance_m: s.distance,
        coords: s.geometry?.coordinates ?? [],
      }))
      .filter((s) => s.pushed_m > 0.5);
    return { coords: r.geometry.coordinates, steps, pushed };
  }
  if (engine === 'osrm') {
    const r = body.code === 'Ok' ? body.routes?.[0] : null;
    if (!r) return null;
    const steps = [];
    const pushed = [];
    for (const leg of r.legs) {
      for (const s of leg.steps) {
        if (s.maneuver.type === 'arrive') continue;
        steps.push({
          uturn: s.maneuver.modifier === 'uturn',
          distance_m: s.distance,
          location: s.maneuver.location,
          name: s.name,
        });
        if (s.mode === 'pushing bike') {
          pushed.push({
            pushed_m: s.distance,
            distance_m: s.distance,
            coords: s.geometry?.coordinates ?? [],
          });
        }
      }
    }
    return { coords: r.geometry.coordinates, steps, pushed };
  }
  // Valhalla: maneuver types 4–6 are the destination, 12 and 13 the U-turns; lengths in km.
  const t = body.trip;
  if (t?.status !== 0) return null;
  const coords = [];
  const steps = [];
  for (const leg of t.legs) {
    const shape = decodePolyline(leg.shape, 6);
    coords.push(...(coords.length ? shape.slice(1) : shape));
    for (const m of leg.maneuvers) {
      if (m.type >= 4 && m.type <= 6) continue;
      steps.push({
        uturn: m.type === 12 || m.type === 13,
        distance_m: m.length * 1000,
        location: shape[m.begin_shape_index],
        name: m.street_names?.[0] ?? '',
      });
    }
  }
  return { coords, steps, pushed: null };
}

/**
 * Metres pushed on a normalized route, and of them those on bare major roads (a pushed step's bare
 * major metres in the share of it pushed); both null when the engine does not say.
 */
export function pushedOn(index, pushed) {
  if (!pushed) return { pushed_m: null, pushed_bare_major_m: null };
  let m = 0;
  let bare = 0;
  for (const s of pushed) {
    m += s.pushed_m;
    if (s.distance_m > 0 && s.coords.length > 1) {
      bare += classify(index, s.coords).bare_major_m * (s.pushed_m / s.distance_m);
    }
  }
  return { pushed_m: m, pushed_bare_major_m: bare };
}

/** Value at quantile `q` of sorted values (as route-quality-bench reads it). */
export function quantile(sorted, q) {
  return sorted.length ? sorted[Math.round((sorted.length - 1) * q)] : Number.NaN;
}

/**
 * The route-quality columns of one engine and setting, over the trips: each trip is
 * `{crow_m, route, ref}` with `route` and `ref` (that engine's most direct route) as `classify`
 * plus `steps`, or null when unroutable. Length ratios and totals cover the trips where both
 * `route` and `ref` exist.
 */
export function summarize(trips) {
  const crow = [];
  const overRef = [];
  let length = 0;
  let refLength = 0;
  let major = 0;
  let bare = 0;
  let refBare = 0;
  let unmatched = 0;
  let steps = 0;
  let short = 0;
  let uturns = 0;
  let unroutable = 0;
  let ridden = 0;
  // Pushed metres (all, and on bare major roads) over the trips with a reference, when the engine
  // and its reference say.
  let pushedKnown = true;
  let pushed = 0;
  let pushedBare = 0;
  let refPushed = 0;
  let refPushedBare = 0;
  for (const t of trips) {
    if (!t.route) {
      unroutable++;
      continue;
    }
    crow.push(t.route.length_m / t.crow_m);
    ridden += t.route.length_m;
    steps += t.route.steps.length;
    short += t.route.steps.filter((s) => s.distance_m < SHORT_STEP_M).length;
    uturns += t.route.steps.filter((s) => s.uturn).length;
    if (!t.ref) continue;
    overRef.push(t.route.length_m / t.ref.length_m);
    length += t.route.length_m;
    refLength += t.ref.length_m;
    major += t.route.major_m;
    bare += t.route.bare_major_m;
    refBare += t.ref.bare_major_m;
    unmatched += t.route.unmatched_m;
    if (
      t.route.pushed_m === null ||
      t.route.pushed_m === undefined ||
      t.ref.pushed_m === null ||
      t.ref.pushed_m === undefined
    ) {
      pushedKnown = false;
    } else {
      pushed += t.route.pushed_m;
      pushedBare += t.route.pushed_bare_major_m;
      refPushed += t.ref.pushed_m;
      refPushedBare += t.ref.pushed_bare_major_m;
    }
  }
  // The cut over ridden metres: the bare major-road share of the metres ridden, against the most
  // direct route's (a stretch walked beside a major road counts neither as quiet riding nor as busy).
  const riddenShare = (b, pb, l, p) => (l - p > 0 ? (b - pb) / (l - p) : 0);
  const refRiddenShare = riddenShare(refBare, refPushedBare, refLength, refPushed);
  crow.sort((a, b) => a - b);
  overRef.sort((a, b) => a - b);
  const avoided = refBare - bare;
  return {
    routed: crow.length,
    unroutable,
    length_over_crow_median: quantile(crow, 0.5),
    length_over_direct_median: quantile(overRef, 0.5),
    length_over_direct_p90: quantile(overRef, 0.9),
    length_over_direct_total: refLength > 0 ? length / refLength : Number.NaN,
    length_km: length / 1000,
    major_road_km: major / 1000,
    bare_major_road_km: bare / 1000,
    direct_bare_major_road_km: refBare / 1000,
    bare_major_cut: refBare > 0 ? avoided / refBare : 0,
    extra_m_per_m_avoided: avoided > 0 ? (length - refLength) / avoided : null,
    unmatched_share: length > 0 ? unmatched / length : 0,
    steps_per_km: ridden > 0 ? steps / (ridden / 1000) : 0,
    short_step_share: steps ? short / steps : 0,
    uturn_steps: uturns,
    ridden_km: pushedKnown ? (length - pushed) / 1000 : null,
    pushed_km: pushedKnown ? pushed / 1000 : null,
    pushed_share: pushedKnown && length > 0 ? pushed / length : null,
    bare_major_cut_over_ridden:
      pushedKnown && refRiddenShare > 0
        ? 1 - riddenShare(bare, pushedBare, length, pushed) / refRiddenShare
        : null,
  };
}
