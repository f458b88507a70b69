// Multi-modal benchmark: a real Quietway server on loopback with the New York extract and the
// recorded Citi Bike feed (2,226 stations) served by a GBFS server on 127.0.0.1; random trips in
// Manhattan below 42nd Street about 3 km apart (2.5–3.5 km as the crow flies) that get docked
// options. POST /multi-modal/v2/ with autocannon at 1 connection (latency) and 8 connections
// (throughput), beside POST /directions/v2/ on the same trips as the in-run baseline.
// Prints a table and writes bench/out/multimodal.json. `node bench/multimodal.mjs [--quick]`
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../server/dist/app.js';
import { issueKey } from '../server/dist/auth/keys.js';
import { loadConfig } from '../server/dist/config.js';
import {
  benchServerEnv,
  buildNycGraph,
  machine,
  manhattanPoints,
  root,
  serveCitiBike,
  waitForServer,
} from './common.mjs';

const quick = process.argv.includes('--quick');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-bench-mm-'));
buildNycGraph(path.join(dataDir, 'graphs'));

// The recorded Citi Bike feed on loopback.
const gbfs = await serveCitiBike();

const env = benchServerEnv(dataDir, gbfs);
const config = loadConfig(env);
// The key is written to the database before the server (a separate process) opens it.
const setup = await buildApp({ config });
await setup.gbfs.ready();
const { key } = issueKey(setup.repos, { kind: 'app', name: 'bench', source: null, legacyV1: false });
const port = config.port;
const server = spawn(process.execPath, [path.join(root, 'server/dist/cli.js'), 'serve'], {
  env,
  stdio: 'inherit',
});
await waitForServer(port, { seconds: 60, ready: (h) => h.bike_share?.[0]?.status === 'ok' });

const hav = (a, b) => {
  const r = Math.PI / 180;
  const h =
    Math.sin(((b[1] - a[1]) * r) / 2) ** 2 +
    Math.cos(a[1] * r) * Math.cos(b[1] * r) * Math.sin(((b[0] - a[0]) * r) / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
};
const post = async (url, body) => {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method: 'POST',
    headers: { apikey: key, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: await res.json() };
};

// Trips that get a Citi Bike option (stations on both ends, within the 3 × rule).
const point = manhattanPoints(17);
const trips = [];
let optionCount = 0;
// Metres pushed on the cycling legs, per kind of option (`Personal SuperSafe™`, `Docked`, …): each
// step's metres pushed read from its time (ridden at 15 km/h, 22 on an e-bike; pushed at 5 km/h,
// docs/api.md), and the options whose cycling legs push more than 30 % of their length.
const pushing = {};
function tallyPushing(options) {
  for (const o of options) {
    const kind = `${o.bike_type}${o.bike_type === 'Personal' ? ` ${o.label}` : ''}${o.is_electric ? ' e-bike' : ''}`;
    const ride = (o.is_electric ? 22 : 15) / 3.6;
    const walk = 5 / 3.6;
    let metres = 0;
    let pushed = 0;
    for (const leg of o.legs.filter((l) => l.mode !== 'walking')) {
      for (const st of leg.steps) {
        metres += st.distance;
        const p = (st.duration - st.distance / ride) / (1 / walk - 1 / ride);
        pushed += Math.min(st.distance, Math.max(0, p));
      }
    }
    if (!pushing[kind]) pushing[kind] = { options: 0, ridden_m: 0, pushed_m: 0, over_30: 0 };
    const t = pushing[kind];
    t.options++;
    t.ridden_m += metres - pushed;
    t.pushed_m += pushed;
    if (metres > 0 && pushed / metres > 0.3) t.over_30++;
  }
}
while (trips.length < (quick ? 40 : 100)) {
  const a = point();
  const b = point();
  const d = hav(a, b);
  if (d < 2500 || d > 3500) continue;
  const body = JSON.stringify({ origin: a, destination: b, departure_time: '2026-11-23T12:00' });
  const r = await post('/multi-modal/v2/', body);
  if (r.status !== 200 || !r.json.options.some((o) => o.bike_type === 'Docked')) continue;
  optionCount += r.json.options.length;
  tallyPushing(r.json.options);
  trips.push({
    multimodal: body,
    directions: JSON.stringify({ coordinates: [a, b], departure_time: '2026-11-23T12:00' }),
  });
}

async function run(url, bodies, connections, duration) {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${url}`,
    connections,
    duration,
    requests: bodies.map((body) => ({
      method: 'POST',
      headers: { apikey: key, 'content-type': 'application/json' },
      body,
    })),
  });
  return {
    connections,
    duration_s: r.duration,
    requests: r.requests.total,
    requests_per_s: r.requests.average,
    latency_p50_ms: r.latency.p50,
    latency_p90_ms: r.latency.p90,
    latency_p99_ms: r.latency.p99,
    errors: r.errors,
    non_2xx: r.non2xx,
  };
}

const seconds = quick ? 5 : 15;
const mm = trips.map((t) => t.multimodal);
const dir = trips.map((t) => t.directions);
// Warm-up, then one fixed trip, the random set, and the baseline on the same trips.
await run('/multi-modal/v2/', mm, 1, 2);
const one = await run('/multi-modal/v2/', [mm[0]], 1, seconds);
const seq = await run('/multi-modal/v2/', mm, 1, seconds);
const base = await run('/directions/v2/', dir, 1, seconds);
const load = await run('/multi-modal/v2/', mm, 8, seconds);

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await setup.close();
gbfs.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const result = {
  name: 'multimodal',
  quick,
  machine: machine(),
  endpoint: 'POST /multi-modal/v2/',
  trips: `${trips.length} random trips in Manhattan below 42nd Street, 2.5–3.5 km apart, each with a Citi Bike docked option`,
  feed: 'Citi Bike station_information + station_status recorded 2024-10-02 (2,226 stations), GBFS 1.1 over loopback',
  mean_options_per_trip: optionCount / trips.length,
  goal_p50_ms: 30,
  one_trip_1_connection: one,
  random_trips_1_connection: seq,
  directions_v2_same_trips_1_connection: base,
  random_trips_8_connections: load,
  pushing_on_cycling_legs: pushing,
};
fs.mkdirSync(path.join(root, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/out/multimodal.json'), JSON.stringify(result, null, 2));
console.log('| measure | p50 | p90 | p99 | throughput |');
console.log('|---|---|---|---|---|');
const row = (label, r) =>
  console.log(
    `| ${label} | ${r.latency_p50_ms} ms | ${r.latency_p90_ms} ms | ${r.latency_p99_ms} ms | ${r.requests_per_s.toFixed(0)} req/s (${r.errors} errors, ${r.non_2xx} non-2xx) |`,
  );
row('multi-modal, one 3 km trip, 1 connection', one);
row(`multi-modal, ${trips.length} random 3 km trips, 1 connection`, seq);
row('directions v2 (baseline), same trips, 1 connection', base);
row('multi-modal, random trips, 8 connections', load);
console.log(`mean options per trip: ${result.mean_options_per_trip.toFixed(2)}; goal: p50 under 30 ms`);
console.log('');
console.log(
  '| option (cycling legs) | options | km ridden | km pushed | pushed share | options pushing > 30 % |',
);
console.log('|---|---|---|---|---|---|');
for (const [kind, t] of Object.entries(pushing)) {
  const share = t.pushed_m / Math.max(1, t.ridden_m + t.pushed_m);
  console.log(
    `| ${kind} | ${t.options} | ${(t.ridden_m / 1000).toFixed(1)} | ${(t.pushed_m / 1000).toFixed(1)} | ${(share * 100).toFixed(1)} % | ${t.over_30} |`,
  );
}
console.log('written bench/out/multimodal.json');
