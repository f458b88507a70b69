// Rule checker for POST /explain-supersafe/ (issue 18): a real server on loopback with the largest
// extract of New York, Chicago and London, 500 random trips per city (300 m or more as the crow
// flies, both ends within 25 m of a road and inside the city's coverage; in New York none starts,
// ends or crosses the East Village hole of the extract, shared/data/README.md). Every answer is
// checked against the spec's content rules by code that plans both routes itself through the addon
// (the same graph, departure and regime) and reads the text: the first sentence names the key
// difference (a disruption in force, else the busiest street avoided); at most one street per side;
// every named street lies on the route it is said to be on; a cycle route's name where the street
// carries one; lighting only on night comparisons (and only when true); time only when SuperSafe is
// at least a minute longer, in whole minutes; never equal times, percentages or distances; one
// sentence of at most 120 characters without a trailing period; the fixed sentence for identical
// routes; `no_route` when a route is missing. A third of the trips depart while a few seeded
// disruptions (roadworks and closures on busy streets) are in force; a third are night comparisons.
// Each trip is asked once more with a context built from the checker's own summaries, checked for
// two to three sentences of at most 320 characters naming only a street of the context.
//
// Latency: each city's trips are asked again without context, three rounds, the best p50 kept.
// Prints a table per city and writes bench/out/explain-check.json (with the samples to read by hand).
// `npm run build:ts && node bench/explain-check.mjs [--trips N] [--graphs DIR] [--shared-data DIR] [--out FILE]`
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../server/dist/app.js';
import { issueKey } from '../server/dist/auth/keys.js';
import { loadConfig } from '../server/dist/config.js';
import { contains } from '../server/dist/routing/coverage.js';
import { shared as defaultShared, machine, root } from './common.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const TRIPS = Number(arg('--trips', '500'));
const shared = arg('--shared-data', defaultShared);
const outFile = arg('--out', path.join(root, 'bench/out/explain-check.json'));
const CITIES = [
  ['nyc', 'nyc-manhattan-below-42nd.osm.pbf'],
  ['chicago', 'chicago-loop.osm.pbf'],
  ['london', 'london-clerkenwell.osm.pbf'],
];
const NYC_HOLE = [-74.0035, 40.7285, -73.965, 40.7375];
const FIXED = 'The most direct route as well as the quietest';
// Cycle route "names" that only say what a route is ("Local cycle route") are no reference to prefer.
const GENERIC_ROUTE =
  /^((local|regional|national|city|london) )?(cycle|bike|bicycle) ?(route|network|path|lane)s?$/i;
const DAY = '2026-11-24';
const IN_FORCE = `${DAY}T10:00`; // the seeded disruptions run 08:00–18:00
const NOT_IN_FORCE = `${DAY}T20:00`;

// ---- graphs and server ----
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-explain-check-'));
const graphs = arg('--graphs', null);
if (graphs) fs.symlinkSync(path.resolve(graphs), path.join(dataDir, 'graphs'));
else {
  for (const [city, file] of CITIES) {
    execFileSync(path.join(root, 'target/release/quietway-build-graph'), [
      '--city',
      city,
      '--osm',
      path.join(shared, 'osm', file),
      '--out',
      path.join(dataDir, 'graphs'),
      '--shared-data',
      shared,
      '--min-island-nodes',
      '25',
      '--quiet',
    ]);
  }
}
const config = loadConfig({
  QUIETWAY_DATA_DIR: dataDir,
  QUIETWAY_HOST: '127.0.0.1',
  QUIETWAY_LOG_LEVEL: 'silent',
  QUIETWAY_SHARED_DATA_DIR: shared,
  QUIETWAY_RATE_LIMITS: JSON.stringify({ explain: { key: [100_000_000, 60] } }),
});
const app = await buildApp({ config });
const { key } = issueKey(app.repos, { kind: 'app', name: 'explain-check', source: null, legacyV1: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const post = (payload) =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify(payload);
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/explain-supersafe/',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          apikey: key,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            body: JSON.parse(text),
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });

// ---- a deterministic random source ----
let seed = 18;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const crow = (a, b) => {
  const r = Math.PI / 180;
  const h =
    Math.sin(((b[1] - a[1]) * r) / 2) ** 2 +
    Math.cos(a[1] * r) * Math.cos(b[1] * r) * Math.sin(((b[0] - a[0]) * r) / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
};
/** Whether the segment a–b touches the box [w, s, e, n] (sampled every ~10 m; the box is ~1 km wide). */
const touchesBox = (a, b, [w, s, e, n]) => {
  const steps = Math.max(2, Math.ceil(crow(a, b) / 10));
  for (let i = 0; i <= steps; i++) {
    const x = a[0] + ((b[0] - a[0]) * i) / steps;
    const y = a[1] + ((b[1] - a[1]) * i) / steps;
    if (x >= w && x <= e && y >= s && y <= n) return true;
  }
  return false;
};
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ---- the checker's own reading of a route ----
const readName = (a) => a.name.trim() || a.ref.trim();
function readRoute(out, night) {
  const r = {
    meters: 0,
    seconds: 0,
    climb: 0,
    descent: 0,
    streets: new Map(),
    routes: new Set(),
    ways: new Set(),
    arcs: [],
    geometry: [],
    cls: { cycleway: 0, quiet: 0, shared: 0, moderate: 0, busy: 0 },
    lit: 0,
    all: 0,
  };
  for (const leg of out.legs) {
    r.meters += leg.distance;
    r.seconds += leg.duration;
    r.climb += leg.elevationGain;
    r.descent += leg.elevationLoss;
    for (const v of leg.geometry) r.geometry.push(v);
    for (const a of leg.arcs) {
      r.arcs.push(a);
      r.ways.add(a.wayId);
      r.all += a.distance;
      if (a.lit) r.lit += a.distance;
      r.cls[a.safetyClass === 'very_busy' ? 'busy' : a.safetyClass] += a.distance;
      for (const c of a.cycleRoutes) r.routes.add(c);
      const n = readName(a);
      if (!n) continue;
      const s = r.streets.get(n) ?? { meters: 0, busy: 0, veryBusy: 0 };
      s.meters += a.distance;
      if (a.safetyClass === 'busy') s.busy += a.distance;
      if (a.safetyClass === 'very_busy') s.veryBusy += a.distance;
      r.streets.set(n, s);
    }
  }
  r.litShare = night ? r.lit / Math.max(1, r.all) : null;
  return r;
}
const longestRun = (a, b) => {
  const other = new Set(b.arcs.map((x) => x.arc));
  let best = 0;
  let run = 0;
  for (const x of a.arcs) {
    run = other.has(x.arc) ? 0 : run + x.distance;
    best = Math.max(best, run);
  }
  return best;
};
const onRoute = (r, name) => r.streets.has(name) || r.routes.has(name);
function busiestAvoided(safe, direct) {
  let best = null;
  let score = 0;
  for (const [n, s] of direct.streets) {
    if (safe.streets.has(n) || s.busy + s.veryBusy < 30) continue;
    const sc = 2 * s.veryBusy + s.busy;
    if (sc > score || (sc === score && n < best)) [best, score] = [n, sc];
  }
  return best;
}
function metersToLine([x, y], flat) {
  const k = Math.cos((y * Math.PI) / 180);
  const f = (Math.PI * 6371008.8) / 180;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 3 < flat.length; i += 2) {
    const ax = (flat[i] - x) * f * k,
      ay = (flat[i + 1] - y) * f;
    const bx = (flat[i + 2] - x) * f * k,
      by = (flat[i + 3] - y) * f;
    const dx = bx - ax,
      dy = by - ay,
      l2 = dx * dx + dy * dy;
    const t = l2 > 0 ? Math.max(0, Math.min(1, -(ax * dx + ay * dy) / l2)) : 0;
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

// ---- reading the text ----
const DIRECT_CUES = [
  'busy',
  'traffic on',
  'roadworks on',
  'closure on',
  'disruption on',
  'avoids',
  'keeps off',
  'turn off',
];
const SAFE_CUES = ['taking', 'takes', 'following', 'follows', 'by way of', 'via'];
/** Every known name the text mentions (longest first, whole words), with the side its cue gives. */
function mentions(text, names) {
  const found = [];
  const taken = new Array(text.length).fill(false);
  for (const n of names) {
    const re = new RegExp(`(?<![\\w’'])${escapeRe(n)}(?![\\w’'])`, 'g');
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const s = m.index,
        e = s + n.length;
      if (taken.slice(s, e).some(Boolean)) continue;
      for (let i = s; i < e; i++) taken[i] = true;
      found.push({ name: n, start: s, end: e });
    }
  }
  found.sort((a, b) => a.start - b.start);
  let from = 0;
  for (const f of found) {
    const before = text.slice(from, f.start).toLowerCase();
    let side = null,
      at = -1;
    for (const c of DIRECT_CUES) {
      const i = before.lastIndexOf(c);
      if (i > at) [side, at] = ['direct', i];
    }
    for (const c of SAFE_CUES) {
      const i = before.lastIndexOf(c);
      if (i > at) [side, at] = ['safe', i];
    }
    f.side = side;
    from = f.end;
  }
  return found;
}
const mask = (text, found) => {
  let out = '';
  let i = 0;
  for (const f of found) {
    out += `${text.slice(i, f.start)}NAME`;
    i = f.end;
  }
  return out + text.slice(i);
};

const RULES = [
  'status',
  'no_route',
  'identical',
  'form',
  'length',
  'one_street_per_side',
  'street_on_route',
  'unattributed_street',
  'key_difference',
  'cycle_route_preferred',
  'time',
  'equal_times',
  'percent_distance',
  'lighting',
  'claims',
  'context_form',
  'context_streets',
];

function check(_trip, res, safe, direct, applying, night, names) {
  const v = [];
  const { status, body } = res;
  if (status !== 200) return [`status: ${status} ${JSON.stringify(body)}`];
  const none = !safe || !direct;
  if (none) {
    if (!(body.no_route === true && body.summary === null))
      v.push('no_route: a route is missing but the answer is not no_route with a null summary');
    return v;
  }
  if (body.no_route !== undefined) v.push('no_route: present although both routes exist');
  const identical = longestRun(safe, direct) < 30 && longestRun(direct, safe) < 30;
  if (identical !== (body.identical === true) || (identical && body.summary !== FIXED))
    v.push(`identical: expected ${identical}, got ${body.identical} "${body.summary}"`);
  const text = body.summary;
  if (identical || text === null || text === FIXED) return v;
  const found = mentions(text, names);
  const masked = mask(text, found);
  if (/[.!?]/.test(masked)) v.push('form: more than one sentence, or a trailing period');
  if (text.length > 120) v.push(`length: ${text.length} characters`);
  const sides = { safe: [], direct: [] };
  for (const f of found) {
    if (!f.side) {
      v.push(`unattributed_street: ${f.name}`);
      continue;
    }
    sides[f.side].push(f.name);
    const r = f.side === 'safe' ? safe : direct;
    const other = f.side === 'safe' ? direct : safe;
    if (!onRoute(r, f.name)) v.push(`street_on_route: ${f.name} is said to be on ${f.side} but is not`);
    const avoidedCue =
      f.side === 'direct' && !/(roadworks|closure|disruption) on\s*$/i.test(text.slice(0, f.start));
    // "instead"/"avoids": a safe-side name the direct route never rides, a direct-side one SuperSafe never rides.
    if ((f.side === 'safe' || avoidedCue) && onRoute(other, f.name))
      v.push(`street_on_route: ${f.name} is on both routes`);
  }
  if (sides.safe.length > 1 || sides.direct.length > 1)
    v.push(`one_street_per_side: ${JSON.stringify(sides)}`);
  // The key difference.
  const first = found[0];
  const disruptionWord = /\b(roadworks|closure|disruption)\b/i.exec(text);
  if (applying.length > 0) {
    if (!disruptionWord || (first && first.start < disruptionWord.index))
      v.push('key_difference: a disruption applies but is not named first');
  } else {
    if (disruptionWord) v.push('claims: a disruption is named but none applies');
    const busiest = busiestAvoided(safe, direct);
    if (busiest && !(first && first.name === busiest && first.side === 'direct'))
      v.push(
        `key_difference: the busiest street avoided is ${busiest}, first named is ${first?.name ?? 'none'}`,
      );
  }
  if (disruptionWord) {
    const kind = disruptionWord[1].toLowerCase();
    const ok = applying.some((d) =>
      kind === 'roadworks'
        ? d.source === 'wzdx'
        : d.source !== 'wzdx' && (kind === 'closure') === (d.severity === 'closed'),
    );
    if (!ok) v.push(`claims: "${kind}" but no such disruption applies`);
  }
  // A safe-side street that carries a cycle route the direct route never rides: the route's name was preferred.
  for (const n of sides.safe) {
    if (safe.routes.has(n)) continue;
    const carried = safe.arcs
      .filter((a) => readName(a) === n)
      .flatMap((a) => a.cycleRoutes)
      .filter((c) => !GENERIC_ROUTE.test(c) && !direct.routes.has(c) && !direct.streets.has(c));
    const meters = new Map();
    for (const a of safe.arcs)
      for (const c of a.cycleRoutes)
        if (carried.includes(c)) meters.set(c, (meters.get(c) ?? 0) + a.distance);
    if ([...meters.values()].some((m) => m >= 100))
      v.push(`cycle_route_preferred: ${n} named though it carries ${[...meters.keys()].join(', ')}`);
  }
  // Time.
  const extra = safe.seconds - direct.seconds;
  const minutes = /(\d+) (?:extra |more )?minutes?\b/.exec(masked);
  if (minutes) {
    const n = Number(minutes[1]);
    if (extra < 60 || n !== Math.floor(extra / 60))
      v.push(`time: says ${n} minutes, SuperSafe is ${extra.toFixed(0)} s longer`);
  } else if (/\b(minutes?|longer|slower|quicker|faster)\b/i.test(masked))
    v.push('time: speaks of time without whole minutes');
  if (/same time|as quick|as fast|no slower|no longer|equal/i.test(text)) v.push('equal_times');
  const digits = masked.replace(minutes ? minutes[0] : '\u0000', '');
  if (/\d|%|percent|\bkm\b|metres|meters|miles|\bmi\b|feet/i.test(digits))
    v.push(`percent_distance: "${text}"`);
  if (/\blit\b|light|dark/i.test(masked)) {
    if (!night) v.push('lighting: on a daytime comparison');
    else if (!(safe.litShare > direct.litShare)) v.push('lighting: SuperSafe is not the better-lit route');
  }
  const q = (r) => r.cls.cycleway + r.cls.quiet;
  if (/quiet streets and cycle tracks/.test(masked) && !(q(safe) > q(direct)))
    v.push('claims: "more on quiet streets" is false');
  if (/less of the (ride|way) on busy roads/.test(masked) && !(safe.cls.busy < direct.cls.busy))
    v.push('claims: "less on busy roads" is false');
  if (/less climbing/.test(masked) && !(safe.climb < direct.climb))
    v.push('claims: "less climbing" is false');
  for (const f of found) {
    if (/(busy|traffic on)\s*$/i.test(text.slice(0, f.start))) {
      const s = direct.streets.get(f.name);
      if (!s || s.busy + s.veryBusy <= 0)
        v.push(`claims: ${f.name} called busy but the direct route rides none of it busy`);
    }
  }
  return v;
}

const brief = (r) =>
  r && {
    meters: Math.round(r.meters),
    seconds: Math.round(r.seconds),
    classes: Object.fromEntries(Object.entries(r.cls).map(([k, m]) => [k, Math.round(m)])),
    streets: [...r.streets.keys()],
    routes: [...r.routes],
  };

/** The context a client would send: both summaries and the busy streets avoided. */
function contextOf(safe, direct, night) {
  const summary = (r, label) => ({
    label,
    meters: Math.round(r.meters),
    seconds: Math.round(r.seconds),
    climb_meters: Math.round(r.climb),
    descent_meters: Math.round(r.descent),
    character_meters: Object.fromEntries(Object.entries(r.cls).map(([k, m]) => [k, Math.round(m)])),
    lit_share: night ? r.litShare : null,
  });
  const avoided = [];
  for (const [n, s] of direct.streets) {
    if (!safe.streets.has(n) && s.busy + s.veryBusy >= 30)
      avoided.push({ kind: 'busy_street', name: n, meters: Math.round(s.busy + s.veryBusy) });
  }
  avoided.sort((a, b) => b.meters - a.meters);
  return {
    safe: summary(safe, 'SuperSafe™'),
    direct: summary(direct, 'Direct'),
    avoided: avoided.slice(0, 12),
  };
}
function checkContext(res, ctx, names) {
  const v = [];
  if (res.status !== 200) return [`status: context ${res.status} ${JSON.stringify(res.body)}`];
  const text = res.body.summary;
  if (text === null) return v;
  const found = mentions(text, names);
  const masked = mask(text, found);
  const sentences = masked.split(/(?<=\.)\s+/).filter(Boolean);
  if (!text.endsWith('.') || sentences.length < 2 || sentences.length > 3 || text.length > 320)
    v.push(`context_form: ${sentences.length} sentences, ${text.length} characters: "${text}"`);
  const allowed = new Set(ctx.avoided.map((a) => a.name));
  if (found.length > 1 || found.some((f) => !allowed.has(f.name)))
    v.push(`context_streets: ${found.map((f) => f.name).join(', ')}`);
  const extra = ctx.safe.seconds - ctx.direct.seconds;
  const minutes = /(\d+) minutes?\b/.exec(masked);
  if (
    minutes
      ? extra < 60 || Number(minutes[1]) !== Math.floor(extra / 60)
      : /\b(minutes?|longer|slower)\b/.test(masked)
  )
    v.push('time: (context)');
  if (/\d/.test(masked.replace(minutes ? minutes[0] : '\u0000', ''))) v.push('percent_distance: (context)');
  return v;
}

// ---- per city ----
const results = {};
for (const [cityId] of CITIES) {
  const city = app.engine.city(cityId);
  const engine = city.engine;
  const bbox = engine.stats().bbox;
  const roads = await engine.roads(bbox, 10_000_000);
  const nameSet = new Set();
  for (const r of roads) {
    for (const n of [r.name.trim(), r.ref.trim(), ...r.cycleRoutes]) if (n.length > 1) nameSet.add(n);
  }
  const names = [...nameSet].sort((a, b) => b.length - a.length);
  // Seeded disruptions: six busy named ways, half imported roadworks, half curated closures (one "avoid").
  const busy = roads.filter(
    (r) => r.name && (r.forwardClass === 'very_busy' || r.forwardClass === 'busy') && r.length > 40,
  );
  const seeded = [];
  for (let i = 0; i < 6 && busy.length > 0; i++) {
    const r = busy[Math.floor(rnd() * busy.length)];
    const g = r.geometry;
    const mid = Math.floor(g.length / 4) * 2;
    const d = app.repos.disruptions.create({
      source: i % 2 === 0 ? 'wzdx' : 'curator',
      city: cityId,
      name: r.name,
      notes: 'explain-check',
      severity: i === 5 ? 'avoid' : 'closed',
      location: [g[mid], g[mid + 1]],
      startDate: DAY,
      startMinute: 8 * 60,
      endDate: DAY,
      endMinute: 18 * 60,
      wayIds: [r.wayId],
    });
    seeded.push(d);
  }
  app.roadChanges.syncDisruptions(cityId);

  const stats = {
    trips: 0,
    draws: 0,
    null_examples: [],
    summaries: 0,
    identical: 0,
    null: 0,
    no_route: 0,
    disruption_trips: 0,
    disruption_named: 0,
    night_trips: 0,
    payloads: [],
    violations: Object.fromEntries(RULES.map((r) => [r, 0])),
    ms: [],
    samples: [],
    examples: [],
  };
  while (stats.trips < TRIPS && stats.draws < TRIPS * 200) {
    stats.draws++;
    const a = [bbox[0] + rnd() * (bbox[2] - bbox[0]), bbox[1] + rnd() * (bbox[3] - bbox[1])];
    const b = [bbox[0] + rnd() * (bbox[2] - bbox[0]), bbox[1] + rnd() * (bbox[3] - bbox[1])];
    if (crow(a, b) < 300) continue;
    if (!city.coverage.some((c) => contains(c, a)) || !city.coverage.some((c) => contains(c, b))) continue;
    if (cityId === 'nyc' && touchesBox(a, b, NYC_HOLE)) continue;
    const kind = stats.trips % 3; // 0: disruptions in force, 1: none in force, 2: a night comparison
    const departure = kind === 1 ? NOT_IN_FORCE : IN_FORCE;
    const night = kind === 2 && city.hasLightingData;
    const input = {
      coordinates: [a, b],
      profile: 'cycling',
      night,
      departureLocalMinutes: Math.floor(Date.parse(`${departure}:00Z`) / 60000),
      arcDetails: true,
    };
    const [so, dout] = await Promise.all([
      engine.route({ ...input, supersafe: true }),
      engine.route({ ...input, supersafe: false }),
    ]);
    const w = so?.waypoints ?? dout?.waypoints;
    if (w?.some((p) => p.distance > 25)) continue;
    // Trips without a route are checked (no_route) but drawn again: the 500 are trips that route.
    if (so && dout) stats.trips++;
    if (night && so && dout) stats.night_trips++;
    const safe = so && readRoute(so, night);
    const direct = dout && readRoute(dout, night);
    const now = Math.floor(Date.parse(`${departure}:00Z`) / 60000);
    const applying =
      safe && direct
        ? seeded.filter((d) => {
            const s = Math.floor(Date.parse(`${d.startDate}T00:00:00Z`) / 60000) + d.startMinute;
            const e = Math.floor(Date.parse(`${d.endDate}T00:00:00Z`) / 60000) + d.endMinute;
            if (!(s <= now && now < e) || d.wayIds.some((x) => safe.ways.has(x))) return false;
            return (
              d.wayIds.some((x) => direct.ways.has(x)) ||
              metersToLine(d.location, direct.geometry) <= 150 ||
              metersToLine(d.location, safe.geometry) <= 150
            );
          })
        : [];
    if (applying.length > 0) stats.disruption_trips++;
    const payload = {
      origin: a,
      destination: b,
      departure_time: departure,
      ...(kind === 2 ? { nighttime: true } : {}),
    };
    const res = await post(payload);
    if (safe && direct) stats.payloads.push(payload);
    const v = check(payload, res, safe, direct, applying, night, names);
    const body = res.body;
    if (body.no_route) stats.no_route++;
    else if (body.identical) stats.identical++;
    else if (body.summary === null) {
      stats.null++;
      if (stats.null_examples.length < 10)
        stats.null_examples.push({ payload, safe: brief(safe), direct: brief(direct) });
    } else {
      stats.summaries++;
      if (/roadworks|closure|disruption/.test(body.summary)) stats.disruption_named++;
      if (stats.samples.length < 10 && stats.trips % 7 === 0)
        stats.samples.push({
          origin: a,
          destination: b,
          departure_time: departure,
          night,
          summary: body.summary,
        });
    }
    if (safe && direct && !body.identical) {
      const ctx = contextOf(safe, direct, night);
      const cres = await post({ ...payload, context: ctx });
      v.push(...checkContext(cres, ctx, names));
      if (stats.samples.length <= 10 && stats.trips % 50 === 0 && cres.body.summary)
        stats.samples.push({ context: true, summary: cres.body.summary });
    }
    for (const x of v) {
      const rule = x.split(':')[0];
      stats.violations[rule] = (stats.violations[rule] ?? 0) + 1;
      if (stats.examples.length < 20) stats.examples.push({ payload, violation: x, summary: body.summary });
    }
  }
  // Latency without context: the city's trips asked again, one after another with nothing else
  // running, in three rounds; the round with the lowest p50 is kept (the machine is shared).
  let latency = null;
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const ms = [];
    for (const p of stats.payloads) ms.push((await post(p)).ms);
    ms.sort((x, y) => x - y);
    const pct = (p) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))] ?? null;
    const r = { p50: pct(50), p90: pct(90), p99: pct(99) };
    rounds.push(r);
    if (!latency || r.p50 < latency.p50) latency = r;
  }
  results[cityId] = {
    ...stats,
    payloads: undefined,
    latency_ms: latency,
    latency_rounds_ms: rounds,
    seeded_disruptions: seeded.map((d) => ({
      id: d.id,
      name: d.name,
      severity: d.severity,
      wayIds: d.wayIds,
    })),
  };
  for (const d of seeded)
    app.repos.disruptions.update(Number(d.id.split(':')[1]), { ...d, endDate: DAY, endMinute: 8 * 60 });
}

// ---- report ----
const fmt = (x) => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(2)) : String(x));
console.log(
  '| city | trips | sentences | identical | null | no route | disruption trips | night trips | violations | p50 ms | p90 ms | p99 ms |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const [c, r] of Object.entries(results)) {
  const total = Object.values(r.violations).reduce((s, n) => s + n, 0);
  console.log(
    `| ${c} | ${r.trips} | ${r.summaries} | ${r.identical} | ${r.null} | ${r.no_route} | ${r.disruption_trips} | ${r.night_trips} | ${total} | ${fmt(r.latency_ms.p50)} | ${fmt(r.latency_ms.p90)} | ${fmt(r.latency_ms.p99)} |`,
  );
}
console.log();
console.log(`| rule | ${Object.keys(results).join(' | ')} |`);
console.log(
  `|---|${Object.keys(results)
    .map(() => '---')
    .join('|')}|`,
);
for (const rule of RULES)
  console.log(
    `| ${rule} | ${Object.values(results)
      .map((r) => r.violations[rule] ?? 0)
      .join(' | ')} |`,
  );
for (const [c, r] of Object.entries(results)) {
  console.log(`\n${c}: samples`);
  for (const s of r.samples)
    console.log(`  - ${s.context ? '(context) ' : ''}${s.night ? '(night) ' : ''}${s.summary}`);
  for (const e of r.examples.slice(0, 5)) console.log(`  ! ${e.violation}`);
}
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(
  outFile,
  JSON.stringify({ name: 'explain-check', machine: machine(), trips_per_city: TRIPS, results }, null, 2),
);
await app.close();
agent.destroy();
