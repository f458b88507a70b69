// Load test: a real Quietway server (`quietway serve`, its own process) on loopback with the New York
// extract and the recorded Citi Bike feed served by a GBFS server on 127.0.0.1. For POST /directions/v2/
// and then POST /multi-modal/v2/ on random ~3 km trips in Manhattan below 42nd Street: a warm-up, then
// autocannon for 60 s at a concurrency that keeps both cores busy. Passes when no request failed
// (errors, time-outs, non-2xx) and the server's RSS after the run is within 10 % of its RSS after the
// warm-up (memory flat). Prints a table, writes bench/out/load.json, exits 1 on a failure.
// `node bench/load.mjs [--quick] [--connections N] [--seconds S]`
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

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const quick = process.argv.includes('--quick');
const seconds = arg('--seconds', quick ? 10 : 60);
const warmup = quick ? 5 : 15;
// Twice the cores times eight: more requests in flight than the server can work on at once.
const connections = arg('--connections', 16 * os.cpus().length);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-bench-load-'));
buildNycGraph(path.join(dataDir, 'graphs'));

// The recorded Citi Bike feed on loopback.
const gbfs = await serveCitiBike();

const env = benchServerEnv(dataDir, gbfs);
const config = loadConfig(env);
// The key is written to the database before the server (a separate process) opens it.
const setup = await buildApp({ config });
const { key } = issueKey(setup.repos, { kind: 'app', name: 'load', source: null, legacyV1: false });
await setup.close();
const port = config.port;
const server = spawn(process.execPath, [path.join(root, 'server/dist/cli.js'), 'serve'], {
  env,
  stdio: 'inherit',
});
await waitForServer(port, { seconds: 120, ready: (h) => h.bike_share?.[0]?.status === 'ok' });

const rss = () =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) * 1024;
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

// Trips that route and get a Citi Bike option.
const point = manhattanPoints(21);
const trips = [];
while (trips.length < 100) {
  const a = point();
  const b = point();
  const d = hav(a, b);
  if (d < 2500 || d > 3500) continue;
  const mm = JSON.stringify({ origin: a, destination: b, departure_time: '2026-11-23T12:00' });
  const r = await post('/multi-modal/v2/', mm);
  if (r.status !== 200 || !r.json.options.some((o) => o.bike_type === 'Docked')) continue;
  trips.push({ mm, dir: JSON.stringify({ coordinates: [a, b], departure_time: '2026-11-23T12:00' }) });
}

const cannon = (url, bodies, duration) =>
  autocannon({
    url: `http://127.0.0.1:${port}${url}`,
    connections,
    duration,
    timeout: 30,
    requests: bodies.map((body) => ({
      method: 'POST',
      headers: { apikey: key, 'content-type': 'application/json' },
      body,
    })),
  });

async function measure(label, url, bodies) {
  await cannon(url, bodies, warmup);
  const rssWarm = rss();
  const r = await cannon(url, bodies, seconds);
  const rssAfter = rss();
  return {
    label,
    endpoint: `POST ${url}`,
    connections,
    duration_s: r.duration,
    requests: r.requests.total,
    requests_per_s: r.requests.average,
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    latency_max_ms: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non_2xx: r.non2xx,
    rss_after_warmup_mb: rssWarm / 1e6,
    rss_after_mb: rssAfter / 1e6,
    rss_change: rssAfter / rssWarm - 1,
  };
}

const results = [
  await measure(
    'directions v2',
    '/directions/v2/',
    trips.map((t) => t.dir),
  ),
  await measure(
    'multi-modal v2 (Citi Bike)',
    '/multi-modal/v2/',
    trips.map((t) => t.mm),
  ),
];

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
gbfs.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const failures = results.flatMap((r) => [
  ...(r.errors + r.timeouts + r.non_2xx > 0
    ? [`${r.label}: ${r.errors} errors, ${r.timeouts} time-outs, ${r.non_2xx} non-2xx`]
    : []),
  ...(Math.abs(r.rss_change) > 0.1
    ? [`${r.label}: RSS ${(r.rss_change * 100).toFixed(1)} % after the run`]
    : []),
]);
const result = {
  name: 'load',
  quick,
  machine: machine(),
  trips: `${trips.length} random trips in Manhattan below 42nd Street, 2.5–3.5 km apart, each with a Citi Bike docked option`,
  warmup_s: warmup,
  results,
  failures,
};
fs.mkdirSync(path.join(root, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/out/load.json'), JSON.stringify(result, null, 2));
console.log(
  '| endpoint | connections | duration | requests/s | p50 | p99 | errors / time-outs / non-2xx | RSS after warm-up → after |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.endpoint} | ${r.connections} | ${r.duration_s} s | ${r.requests_per_s.toFixed(0)} | ${r.latency_p50_ms} ms | ${r.latency_p99_ms} ms | ${r.errors} / ${r.timeouts} / ${r.non_2xx} | ${r.rss_after_warmup_mb.toFixed(0)} → ${r.rss_after_mb.toFixed(0)} MB (${(r.rss_change * 100).toFixed(1)} %) |`,
  );
}
console.log('written bench/out/load.json');
if (failures.length > 0) {
  console.error(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
