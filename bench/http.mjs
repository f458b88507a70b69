// HTTP benchmark: a real Quietway server on loopback with the New York extract, random two-waypoint
// cycling routes in Manhattan of about 3 km, with steps. Sequential requests on one kept-alive
// connection (latency percentiles), then autocannon at 8 connections (requests per second).
// Prints a table and writes bench/results/http.json. `node bench/http.mjs [--quick]`
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../server/dist/app.js';
import { issueKey } from '../server/dist/auth/keys.js';
import { loadConfig } from '../server/dist/config.js';
import { buildNycGraph, machine, manhattanPoints, root, shared, waitForServer } from './common.mjs';

const quick = process.argv.includes('--quick');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-bench-'));
buildNycGraph(path.join(dataDir, 'graphs'));
const env = {
  ...process.env,
  QUIETWAY_DATA_DIR: dataDir,
  QUIETWAY_HOST: '127.0.0.1',
  QUIETWAY_PORT: String(20000 + Math.floor(Math.random() * 20000)),
  QUIETWAY_LOG_LEVEL: 'silent',
  QUIETWAY_SHARED_DATA_DIR: shared,
  // The benchmark sends far more than a key's per-minute allowance.
  QUIETWAY_RATE_LIMITS: JSON.stringify({ directions: { key: [100_000_000, 60] } }),
};
const config = loadConfig(env);
// The key is written to the database before the server (a separate process, as in service) opens it.
const setup = await buildApp({ config });
const { key } = issueKey(setup.repos, { kind: 'app', name: 'bench', source: null, legacyV1: false });
const legacy = issueKey(setup.repos, { kind: 'app', name: 'bench v1', source: null, legacyV1: true }).key;
const port = config.port;
const server = spawn(process.execPath, [path.join(root, 'server/dist/cli.js'), 'serve'], {
  env,
  stdio: 'inherit',
});
await waitForServer(port);
const app = setup;

// Random pairs in Manhattan below 42nd Street, 2.5–3.5 km apart as the crow flies, that route.
const hav = (a, b) => {
  const r = Math.PI / 180;
  const h =
    Math.sin(((b[1] - a[1]) * r) / 2) ** 2 +
    Math.cos(a[1] * r) * Math.cos(b[1] * r) * Math.sin(((b[0] - a[0]) * r) / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
};
const point = manhattanPoints(42);
const bodies = [];
while (bodies.length < 200) {
  const a = point();
  const b = point();
  const d = hav(a, b);
  if (d < 2500 || d > 3500) continue;
  const payload = JSON.stringify({ coordinates: [a, b], departure_time: '2026-11-23T12:00' });
  const res = await app.inject({
    method: 'POST',
    url: '/directions/v2/',
    headers: { apikey: key, 'content-type': 'application/json' },
    payload,
  });
  if (res.statusCode === 200 && res.json().route) bodies.push(payload);
}

// Sequential, one kept-alive connection.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = (body) =>
  new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/directions/v2/',
        method: 'POST',
        agent,
        headers: {
          apikey: key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).length)
            : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
for (let i = 0; i < 200; i++) await request(bodies[i % bodies.length]);
const n = quick ? 1000 : 5000;
const times = [];
let bytes = 0;
for (let i = 0; i < n; i++) {
  const t = process.hrtime.bigint();
  bytes += await request(bodies[i % bodies.length]);
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
const pct = (p) => times[Math.round((times.length - 1) * p)];
// The deprecated v1 on the same trips (legacy key), sequentially.
const v1Times = [];
for (let i = 0; i < n / 2; i++) {
  const t = process.hrtime.bigint();
  await request(bodies[i % bodies.length], '/directions/', legacy);
  v1Times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
v1Times.sort((a, b) => a - b);
const v1pct = (p) => v1Times[Math.round((v1Times.length - 1) * p)];
agent.destroy();

// Throughput at 8 connections.
const load = await autocannon({
  url: `http://127.0.0.1:${port}/directions/v2/`,
  connections: 8,
  duration: quick ? 5 : 15,
  // Each connection sends the trips in turn; the requests are built once, so the load generator
  // (on the same two cores) spends its time sending and reading, not re-serializing.
  requests: bodies.map((body) => ({
    method: 'POST',
    headers: { apikey: key, 'content-type': 'application/json' },
    body,
  })),
});
let serverPeak = 0;
try {
  const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
  serverPeak = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
} catch {}
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await app.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const result = {
  name: 'http',
  quick,
  machine: machine(),
  endpoint: 'POST /directions/v2/',
  routes: 'random 2-waypoint cycling routes in Manhattan below 42nd Street, 2.5–3.5 km apart, with steps',
  sequential_keep_alive: {
    requests: n,
    median_ms: pct(0.5),
    p90_ms: pct(0.9),
    p99_ms: pct(0.99),
    mean_response_bytes: Math.round(bytes / n),
  },
  v1_sequential_keep_alive: {
    endpoint: 'POST /directions/',
    requests: v1Times.length,
    median_ms: v1pct(0.5),
    p90_ms: v1pct(0.9),
    p99_ms: v1pct(0.99),
  },
  autocannon_8_connections: {
    duration_s: load.duration,
    requests_per_s: load.requests.average,
    latency_median_ms: load.latency.p50,
    latency_p90_ms: load.latency.p90,
    latency_p99_ms: load.latency.p99,
    errors: load.errors,
    non_2xx: load.non2xx,
  },
  server_peak_memory_bytes: serverPeak,
};
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/results/http.json'), JSON.stringify(result, null, 2));
const s = result.sequential_keep_alive;
const a = result.autocannon_8_connections;
console.log('| measure | median | p90 | p99 | throughput |');
console.log('|---|---|---|---|---|');
console.log(
  `| sequential, kept-alive (${n} requests) | ${s.median_ms.toFixed(2)} ms | ${s.p90_ms.toFixed(2)} ms | ${s.p99_ms.toFixed(2)} ms | ${(1000 / s.median_ms).toFixed(0)} req/s |`,
);
const v = result.v1_sequential_keep_alive;
console.log(
  `| v1 POST /directions/, sequential, kept-alive (${v.requests} requests) | ${v.median_ms.toFixed(2)} ms | ${v.p90_ms.toFixed(2)} ms | ${v.p99_ms.toFixed(2)} ms | ${(1000 / v.median_ms).toFixed(0)} req/s |`,
);
console.log(
  `| autocannon, 8 connections, ${a.duration_s} s | ${a.latency_median_ms} ms | ${a.latency_p90_ms} ms | ${a.latency_p99_ms} ms | ${a.requests_per_s.toFixed(0)} req/s (${a.errors} errors, ${a.non_2xx} non-2xx) |`,
);
console.log('written bench/results/http.json');
