// Addon benchmark: engine calls from Node through N-API (tinybench), on the New York extract, to
// show what the boundary adds to the engine's own figures (bench/results/engine.json): a routed
// 2-waypoint trip with full guidance as objects, the same as the worded v2 route object (JSON bytes,
// what the directions endpoints use), with per-arc details, a one-to-many search, and a near-empty
// call (both waypoints at one spot) that is almost all boundary (libuv hop, promise, conversion). Prints a table and writes bench/results/addon.json. `node bench/addon.mjs [--quick]`
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Bench } from 'tinybench';
import { buildNycGraph, machine, manhattanPoints, root } from './common.mjs';

const quick = process.argv.includes('--quick');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-addon-bench-'));
const graph = buildNycGraph(out);
const addon = createRequire(import.meta.url)(path.join(root, 'addon/index.js'));
const engine = await addon.loadCity(graph);

const point = manhattanPoints(7);
const pairs = [];
while (pairs.length < 500) {
  const c = [point(), point()];
  if (await engine.route({ coordinates: c, profile: 'cycling' })) pairs.push(c);
}
const targets = Array.from({ length: 50 }, point);
let i = 0;
const next = () => pairs[i++ % pairs.length];
const time = quick ? 1500 : 5000;
const bench = new Bench({ time, warmupTime: 300 });
bench
  .add('route with guidance (2 waypoints)', async () => {
    await engine.route({ coordinates: next(), profile: 'cycling', departureLocalMinutes: 29_000_000 });
  })
  .add('directions: route object as JSON (what the server calls)', async () => {
    await engine.routeJson({ coordinates: next(), profile: 'cycling', departureLocalMinutes: 29_000_000 });
  })
  .add('route with guidance and arc details', async () => {
    await engine.route({ coordinates: next(), profile: 'cycling', arcDetails: true });
  })
  .add('one-to-many, 5 nearest of 50', async () => {
    await engine.oneToMany({ origin: next()[0], targets, k: 5, profile: 'cycling' });
  })
  .add('near-empty call (boundary only)', async () => {
    const p = next()[0];
    await engine.route({ coordinates: [p, p], profile: 'cycling' });
  });
await bench.run();
fs.rmSync(out, { recursive: true, force: true });

const tasks = bench.tasks.map((t) => {
  const r = t.result;
  const lat = r.latency;
  return {
    name: t.name,
    samples: lat.samplesCount ?? lat.samples?.length,
    median_us: lat.p50 * 1000,
    p90_us: (lat.p90 ?? lat.p75) * 1000,
    p99_us: lat.p99 * 1000,
    mean_us: lat.mean * 1000,
    throughput_per_s: r.throughput.mean,
  };
});
const result = {
  name: 'addon',
  quick,
  machine: machine(),
  graph: 'nyc-manhattan-below-42nd',
  tasks,
  peak_memory_bytes: process.resourceUsage().maxRSS * 1024,
};
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/results/addon.json'), JSON.stringify(result, null, 2));
console.log('| call through N-API | median | p99 | calls/s |');
console.log('|---|---|---|---|');
for (const t of tasks) {
  console.log(
    `| ${t.name} | ${t.median_us.toFixed(1)} µs | ${t.p99_us.toFixed(1)} µs | ${t.throughput_per_s.toFixed(0)} |`,
  );
}
console.log('written bench/results/addon.json');
