// Scale-out benchmark: requests per second of POST /directions/v2/ (random 1.5–2.5 km cycling trips
// in the lower Manhattan extract, which loads in seconds) for one server process and for two processes
// sharing one data directory and one Redis (rate limits shared, QUIETWAY_REDIS_URL), measured
// together: one autocannon per process, run at the same time, their rates summed. Also one process
// with the in-process rate-limit store, to show what the shared store costs. Then one and two
// processes on the PostgreSQL store (a throw-away cluster, scripts/pg-cluster.mjs) instead of the
// SQLite file, as servers on several hosts would run.
// Needs `redis-server` and `postgresql` (Debian's packages; PostgreSQL is installed when missing). Prints a table and writes bench/results/scale-out.json.
// `node bench/scale-out.mjs [--quick]`
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startPostgres } from '../scripts/pg-cluster.mjs';
import { buildApp } from '../server/dist/app.js';
import { issueKey } from '../server/dist/auth/keys.js';
import { loadConfig } from '../server/dist/config.js';
import { openPostgres } from '../server/dist/db/database.js';
import { createRepositories } from '../server/dist/db/repositories.js';
import { machine, root, shared, waitForServer } from './common.mjs';

const quick = process.argv.includes('--quick');
const duration = quick ? 5 : 15;
const connections = 16;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-scale-out-'));
execFileSync(path.join(root, 'target/release/quietway-build-graph'), [
  '--city',
  'nyc',
  '--osm',
  path.join(shared, 'osm/nyc-lower-manhattan.osm.pbf'),
  '--out',
  path.join(dataDir, 'graphs'),
  '--shared-data',
  shared,
  '--min-island-nodes',
  '25',
  '--quiet',
]);
const children = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const redisPort = await freePort();
const redis = spawn(
  'redis-server',
  ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  { stdio: 'ignore' },
);
children.push(redis);
const env = {
  ...process.env,
  QUIETWAY_DATA_DIR: dataDir,
  QUIETWAY_HOST: '127.0.0.1',
  QUIETWAY_LOG_LEVEL: 'silent',
  QUIETWAY_SHARED_DATA_DIR: shared,
  QUIETWAY_REPORT_ANALYSIS_MS: '0',
  QUIETWAY_RATE_LIMITS: JSON.stringify({ directions: { key: [100_000_000, 60] } }),
};
const setup = await buildApp({ config: loadConfig({ ...env, QUIETWAY_PORT: '0' }) });
const { key } = issueKey(setup.repos, { kind: 'app', name: 'bench', source: null, legacyV1: false });
const hav = (a, b) => {
  const r = Math.PI / 180;
  const h =
    Math.sin(((b[1] - a[1]) * r) / 2) ** 2 +
    Math.cos(a[1] * r) * Math.cos(b[1] * r) * Math.sin(((b[0] - a[0]) * r) / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
};
// Deterministic random points inside the graph's data.
const [w, s0, e, n] = setup.engine.city('nyc').dataBbox;
let seed = 42;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const point = () => [w + rnd() * (e - w), s0 + rnd() * (n - s0)];
const bodies = [];
while (bodies.length < 200) {
  const a = point();
  const b = point();
  const d = hav(a, b);
  if (d < 1500 || d > 2500) continue;
  const payload = JSON.stringify({ coordinates: [a, b], departure_time: '2026-11-23T12:00' });
  const res = await setup.inject({
    method: 'POST',
    url: '/directions/v2/',
    headers: { apikey: key, 'content-type': 'application/json' },
    payload,
  });
  if (res.statusCode === 200 && res.json().route) bodies.push(payload);
}
await setup.close();

async function start(extra) {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.join(root, 'server/dist/cli.js'), 'serve'], {
    env: { ...env, QUIETWAY_PORT: String(port), ...extra },
    stdio: 'inherit',
  });
  children.push(proc);
  await waitForServer(port);
  return { port, proc };
}
const stop = async (s) => {
  s.proc.kill('SIGTERM');
  await new Promise((r) => s.proc.once('exit', r));
};
const load = (port, seconds, apikey = key) =>
  autocannon({
    url: `http://127.0.0.1:${port}/directions/v2/`,
    connections,
    duration: seconds,
    requests: bodies.map((body) => ({
      method: 'POST',
      headers: { apikey, 'content-type': 'application/json' },
      body,
    })),
  });
const summary = (runs) => ({
  requests_per_s: runs.reduce((s, r) => s + r.requests.average, 0),
  latency_median_ms: Math.max(...runs.map((r) => r.latency.p50)),
  latency_p99_ms: Math.max(...runs.map((r) => r.latency.p99)),
  errors: runs.reduce((s, r) => s + r.errors, 0),
  non_2xx: runs.reduce((s, r) => s + r.non2xx, 0),
});

const redisUrl = `redis://127.0.0.1:${redisPort}`;
const results = {};
{
  const s = await start({});
  await load(s.port, 2); // warm-up
  results.one_process_in_process_limits = summary([await load(s.port, duration)]);
  await stop(s);
}
{
  const s = await start({ QUIETWAY_REDIS_URL: redisUrl });
  await load(s.port, 2);
  results.one_process_redis_limits = summary([await load(s.port, duration)]);
  await stop(s);
}
{
  const a = await start({ QUIETWAY_REDIS_URL: redisUrl });
  const b = await start({ QUIETWAY_REDIS_URL: redisUrl });
  await Promise.all([load(a.port, 2), load(b.port, 2)]);
  results.two_processes_redis_limits = summary(
    await Promise.all([load(a.port, duration), load(b.port, duration)]),
  );
  await Promise.all([stop(a), stop(b)]);
}
{
  const pg = await startPostgres();
  const pgEnv = { QUIETWAY_REDIS_URL: redisUrl, QUIETWAY_DATABASE_URL: pg.url };
  const repos = createRepositories(openPostgres(pg.url));
  const pgKey = issueKey(repos, { kind: 'app', name: 'bench', source: null, legacyV1: false }).key;
  repos.close();
  try {
    const s = await start(pgEnv);
    await load(s.port, 2, pgKey);
    results.one_process_postgres_redis_limits = summary([await load(s.port, duration, pgKey)]);
    await stop(s);
    const a = await start(pgEnv);
    const b = await start(pgEnv);
    await Promise.all([load(a.port, 2, pgKey), load(b.port, 2, pgKey)]);
    results.two_processes_postgres_redis_limits = summary(
      await Promise.all([load(a.port, duration, pgKey), load(b.port, duration, pgKey)]),
    );
    await Promise.all([stop(a), stop(b)]);
  } finally {
    pg.stop();
  }
}
redis.kill('SIGKILL');
fs.rmSync(dataDir, { recursive: true, force: true });

const result = {
  name: 'scale-out',
  quick,
  machine: machine(),
  endpoint: 'POST /directions/v2/',
  routes: 'random 2-waypoint cycling routes in the lower Manhattan extract, 1.5–2.5 km apart, with steps',
  connections_per_process: connections,
  duration_s: duration,
  ...results,
};
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/results/scale-out.json'), JSON.stringify(result, null, 2));
console.log('| setup | req/s | median | p99 | errors | non-2xx |');
console.log('|---|---|---|---|---|---|');
for (const [name, r] of Object.entries(results)) {
  console.log(
    `| ${name.replaceAll('_', ' ')} | ${r.requests_per_s.toFixed(0)} | ${r.latency_median_ms} ms | ${r.latency_p99_ms} ms | ${r.errors} | ${r.non_2xx} |`,
  );
}
console.log('written bench/results/scale-out.json');
