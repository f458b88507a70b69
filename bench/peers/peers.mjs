// Quietway side by side with OSRM and Valhalla (issue 25), in one run, on the same machine, extract
// and trips: preparation (each engine's build and a weight change going live), serving (the same
// trips over HTTP with autocannon at 1, 8 and 64 connections) and the routes (the route-quality
// columns per engine and setting, read against the same OSM ways by bench/peers/metrics.mjs).
// Each server is started alone and timed from its spawn to its first successful route, and its
// resident memory read then and after serving. Prints a table, writes bench/out/peers.json, peers.md
// and two SVG pictures, and each server's output to bench/out/peers-quietway.log, peers-osrm.log and
// peers-valhalla.log (a server that ends before the bench is done ends the run, named with its exit
// code or signal and its log's last lines). Started by bench/peers/run.sh (`npm run bench:peers`),
// which provides the peers' virtual environment:
//
//   node bench/peers/peers.mjs --venv DIR [--quick] [--trips N] [--duration S] [--reuse-peer-data]
//                              [--tiles K] [--sample FILE]
//
// `--reuse-peer-data` keeps OSRM's and Valhalla's data (and their build figures, marked as cached)
// from an earlier run with the same versions and extract; Quietway is always built and measured.
// `--tiles K` runs every engine on the sample tiled K × K (bench/scale/tile.py: a city-sized stand-in,
// not a real city), Quietway's coverage being the tiling's box; the trips are drawn across all the
// copies, and the outputs are named peers-tilesK*. `--sample` names the extract (a file in the shared
// data's osm/ folder or a path; default nyc-manhattan-below-42nd.osm.pbf: the trips' box is drawn for it).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { machine, manhattanPoints, root, shared } from '../common.mjs';
import {
  classify,
  haversine,
  nearWay,
  normalize,
  pushedOn,
  quantile,
  summarize,
  wayIndex,
} from './metrics.mjs';
import { latencySvg, tradeoffSvg } from './svg.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const quick = args.includes('--quick');
const reuse = args.includes('--reuse-peer-data');
const venv = path.resolve(opt('--venv', path.join(root, 'bench/peers/.venv')));
const TRIPS = Number(opt('--trips', quick ? '100' : '1000'));
const DURATION = Number(opt('--duration', quick ? '3' : '10'));
const CONNECTIONS = [1, 8, 64];
const TILES = args.includes('--tiles') ? Number(opt('--tiles', 'NaN')) : null;
if (TILES !== null && !(Number.isInteger(TILES) && TILES >= 1)) throw new Error('--tiles takes K ≥ 1');
const sampleArg = opt('--sample', 'nyc-manhattan-below-42nd.osm.pbf');
const sample = fs.existsSync(sampleArg) ? path.resolve(sampleArg) : path.join(shared, 'osm', sampleArg);
const EXTRACT = TILES ? `${path.basename(sample)} tiled ${TILES} × ${TILES}` : path.basename(sample);
// The tiled runs keep their data (the tiling, the peers' data) apart from the sample's.
const cacheDir = path.join(root, 'bench/peers/cache', ...(TILES ? [`tiles${TILES}`] : []));
const outDir = path.join(root, 'bench/out');
const suffix = TILES ? `-tiles${TILES}` : '';
const requirements = fs.readFileSync(path.join(root, 'bench/peers/requirements.txt'), 'utf8');
const pins = Object.fromEntries(
  [...requirements.matchAll(/^([A-Za-z0-9_.-]+)==(\S+)/gm)].map((m) => [m[1], m[2]]),
);
const python = path.join(venv, 'bin/python');
const site = fs
  .readdirSync(path.join(venv, 'lib'))
  .map((d) => path.join(venv, 'lib', d, 'site-packages'))
  .find((d) => fs.existsSync(path.join(d, 'osrm')));
if (!site) throw new Error(`no osrm-bindings in ${venv}; run bench/peers/run.sh`);
const osrmBin = (name) => path.join(site, 'osrm/bin', name);
const valhallaBin = (name) => path.join(site, 'valhalla/bin', name);
const log = (...m) => console.error('[peers]', ...m);

// ---- Processes: timed builds (wall, peak memory) and servers stopped at the end.

const hasTime = fs.existsSync('/usr/bin/time');
/** Runs a command to its end: wall seconds and peak resident memory (bytes). */
function timed(cmd, argv, opts = {}) {
  const memFile = path.join(os.tmpdir(), `quietway-peers-${process.pid}-${Date.now()}.mem`);
  const t = process.hrtime.bigint();
  const res = hasTime
    ? spawnSync('/usr/bin/time', ['-f', '%M', '-o', memFile, cmd, ...argv], { ...opts, encoding: 'utf8' })
    : spawnSync(cmd, argv, { ...opts, encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  if (res.status !== 0) {
    throw new Error(`${path.basename(cmd)} failed (${res.status}): ${(res.stderr ?? '').slice(-2000)}`);
  }
  let peak = null;
  if (hasTime) {
    peak = Number(fs.readFileSync(memFile, 'utf8').trim().split('\n').pop()) * 1024;
    fs.rmSync(memFile, { force: true });
  }
  return { seconds, peak_memory_bytes: peak };
}

function dirBytes(dir, filter = () => true) {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p, filter);
    else if (filter(e.name)) n += fs.statSync(p).size;
  }
  return n;
}

// ---- The servers' processes. Each one's stdout and stderr go to its log, bench/out/peers-NAME.log
// (peers-tilesK-NAME.log with --tiles K; written anew by each run). A server that ends while the
// bench still needs it (before stopAll, after serving) ends the run at once: its name, pid, exit code
// or signal, what the bench was doing and its log's last lines. A request that fails on a connection
// error is put down to the server it was sent to (ask, below).

const children = [];
let stopping = false;
/** What the bench is doing, for the message when a server ends or fails. */
let phase = 'starting the servers';
const ESC = String.fromCharCode(27);
/** A log line without its terminal colour codes (valhalla_service writes them). */
const noColours = (l) =>
  l
    .split(ESC)
    .map((part, i) => (i ? part.replace(/^\[[0-9;]*m/, '') : part))
    .join('');
const relPath = (f) => path.relative(root, f);
const hasEnded = (c) => c.exitCode !== null || c.signalCode !== null;
const howEnded = (c) => (c.signalCode ? `killed by ${c.signalCode}` : `exited with code ${c.exitCode}`);
/** A server's log's last `n` lines (without their colour codes), indented, under a heading. */
function logTail(file, n = 30) {
  let text;
  try {
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 256 * 1024));
    fs.readSync(fd, buf, 0, buf.length, size - buf.length);
    fs.closeSync(fd);
    text = buf.toString('utf8').replace(/\s+$/, '');
  } catch (e) {
    return `(its log ${relPath(file)} could not be read: ${e.message})`;
  }
  if (!text) return `(its log ${relPath(file)} is empty)`;
  const lines = text
    .split('\n')
    .slice(-n)
    .map((l) => `    ${noColours(l)}`);
  return `last ${lines.length} lines of ${relPath(file)}:\n${lines.join('\n')}`;
}
/** Ends the run: the server, what became of it while the bench was doing what, its log's last lines. */
function failServer(child, event, detail) {
  console.error(`[peers] ${child.what} (pid ${child.pid ?? '–'}) ${event} while ${phase}: ${detail}`);
  console.error(`[peers] ${logTail(child.logFile)}`);
  process.exit(1);
}
function start(name, what, cmd, argv, opts = {}) {
  fs.mkdirSync(outDir, { recursive: true });
  const logFile = path.join(outDir, `peers${suffix}-${name}.log`);
  const fd = fs.openSync(logFile, 'w');
  const child = spawn(cmd, argv, { ...opts, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  Object.assign(child, { name, what, logFile });
  child.on('error', (e) => {
    if (child.pid === undefined) failServer(child, 'could not be started', e.message);
    else log(`${what} (pid ${child.pid}): ${e.message}`);
  });
  child.on('exit', () => {
    if (!stopping && !child.retired) failServer(child, 'ended', howEnded(child));
  });
  children.push(child);
  return child;
}
function stopAll() {
  stopping = true;
  for (const c of children) if (!hasEnded(c)) c.kill('SIGTERM');
}
process.on('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopAll();
    process.exit(130);
  });
}
function peakOf(child) {
  try {
    const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
}
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
// ---- Preparation.

fs.mkdirSync(cacheDir, { recursive: true });
// With --tiles K: the sample tiled K × K (made anew each run; tile.py writes the same file for the
// same sample) and the box around it, Quietway's coverage.
let pbf = sample;
let boundary = null;
let tileInfo = null;
if (TILES) {
  pbf = path.join(cacheDir, 'tiled.osm.pbf');
  boundary = path.join(cacheDir, 'tiled.geojson');
  log(`tiling ${path.basename(sample)} ${TILES} × ${TILES} (bench/scale/tile.py)`);
  const t = spawnSync(
    python,
    [path.join(root, 'bench/scale/tile.py'), sample, String(TILES), pbf, boundary],
    {
      encoding: 'utf8',
    },
  );
  if (t.status !== 0) throw new Error(`tile.py failed: ${t.stderr}`);
  tileInfo = { sample: path.basename(sample), ...JSON.parse(t.stdout.trim().split('\n').pop()) };
}
const boundaryArgs = boundary ? ['--boundary', boundary] : [];
const stamp = JSON.stringify({ pins, extract: EXTRACT, size: fs.statSync(pbf).size });
const manifestFile = path.join(cacheDir, 'manifest.json');
const manifest = fs.existsSync(manifestFile) ? JSON.parse(fs.readFileSync(manifestFile, 'utf8')) : null;
const cached = reuse && manifest?.stamp === stamp;

// The ways every route is read against (not a figure).
const waysFile = path.join(cacheDir, 'ways.json');
if (!fs.existsSync(waysFile) || manifest?.stamp !== stamp) {
  log('reading the extract’s ways (pyosmium)');
  timed(python, [path.join(root, 'bench/peers/ways.py'), pbf, waysFile]);
}
const ways = JSON.parse(fs.readFileSync(waysFile, 'utf8')).ways;
const index = wayIndex(ways);

const prep = {};
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-peers-'));
log('building Quietway’s graph');
const qwDataDir = path.join(work, 'quietway');
const qwGraphs = path.join(qwDataDir, 'graphs');
const qwSummary = path.join(work, 'quietway-build.json');
// One `quietway-build-graph` run writes the turn-aware graph with its CCH order, and the place index
// for address search on a thread of its own beside the graph's first phases. OSRM and Valhalla
// build no place index, but it runs beside the graph, so the Quietway row compared with theirs is
// the whole run's wall time and peak memory (a run without it would not be much shorter); the place
// index is its own row (its time on its thread, from --summary-json), timed again alone
// (--places-only) for its peak memory.
const qwAll = timed(path.join(root, 'target/release/quietway-build-graph'), [
  '--city',
  'nyc',
  '--osm',
  pbf,
  '--out',
  qwGraphs,
  '--shared-data',
  shared,
  ...boundaryArgs,
  '--summary-json',
  qwSummary,
  '--quiet',
]);
const qwReport = JSON.parse(fs.readFileSync(qwSummary, 'utf8'));
const placesFile = path.join(qwGraphs, 'nyc.places.ndjson');
const qwPlacesBytes = fs.statSync(placesFile).size;
prep.quietway = {
  seconds: qwAll.seconds,
  peak_memory_bytes: qwAll.peak_memory_bytes,
  output_bytes: dirBytes(qwGraphs) - qwPlacesBytes,
  steps: 'quietway-build-graph: the turn-aware graph and its CCH order (the place index built beside them)',
  whole_run: { ...qwAll, places_seconds: qwReport.places.seconds },
};
const placesOnly = timed(
  path.join(root, 'target/release/quietway-build-graph'),
  [
    '--city',
    'nyc',
    '--osm',
    pbf,
    '--out',
    path.join(work, 'places-only'),
    '--shared-data',
    shared,
    ...boundaryArgs,
    '--places-only',
    '--quiet',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
prep.quietway_places = {
  seconds: qwReport.places.seconds,
  peak_memory_bytes: placesOnly.peak_memory_bytes,
  output_bytes: qwPlacesBytes,
  steps:
    'the place index in the same run, on its own thread (not built by the peers; peak memory from a --places-only run)',
  places_only_run: placesOnly,
};

const osrmCh = path.join(cacheDir, 'osrm-ch');
const osrmMld = path.join(cacheDir, 'osrm-mld');
const valhallaDir = path.join(cacheDir, 'valhalla');
const profile = path.join(site, 'osrm/share/profiles/bicycle.lua');
const osrmFiles = (name) => name.startsWith('nyc.osrm');
if (cached) {
  log('reusing OSRM’s and Valhalla’s data and build figures from', manifest.built_at);
  Object.assign(prep, manifest.prep);
} else {
  for (const d of [osrmCh, osrmMld, valhallaDir]) {
    fs.rmSync(d, { recursive: true, force: true });
    fs.mkdirSync(d, { recursive: true });
  }
  log('OSRM: osrm-extract (stock bicycle profile)');
  fs.symlinkSync(pbf, path.join(osrmCh, 'nyc.osm.pbf'));
  const extract = timed(osrmBin('osrm-extract'), ['-p', profile, 'nyc.osm.pbf'], { cwd: osrmCh });
  for (const f of fs.readdirSync(osrmCh).filter(osrmFiles)) {
    fs.copyFileSync(path.join(osrmCh, f), path.join(osrmMld, f));
  }
  log('OSRM: osrm-contract (CH)');
  const contract = timed(osrmBin('osrm-contract'), ['nyc.osrm'], { cwd: osrmCh });
  prep.osrm_ch = {
    seconds: extract.seconds + contract.seconds,
    peak_memory_bytes: Math.max(extract.peak_memory_bytes, contract.peak_memory_bytes),
    output_bytes: dirBytes(osrmCh, osrmFiles),
    steps: 'osrm-extract + osrm-contract',
    extract,
    contract,
  };
  log('OSRM: osrm-partition + osrm-customize (MLD)');
  const partition = timed(osrmBin('osrm-partition'), ['nyc.osrm'], { cwd: osrmMld });
  const customize = timed(osrmBin('osrm-customize'), ['nyc.osrm'], { cwd: osrmMld });
  prep.osrm_mld = {
    seconds: extract.seconds + partition.seconds + customize.seconds,
    peak_memory_bytes: Math.max(
      extract.peak_memory_bytes,
      partition.peak_memory_bytes,
      customize.peak_memory_bytes,
    ),
    output_bytes: dirBytes(osrmMld, osrmFiles),
    steps: 'osrm-extract + osrm-partition + osrm-customize',
    extract,
    partition,
    customize,
  };
  log('Valhalla: valhalla_build_config + valhalla_build_tiles');
  const cfg = spawnSync(
    path.join(venv, 'bin/valhalla_build_config'),
    [
      '--mjolnir-tile-dir',
      path.join(valhallaDir, 'tiles'),
      '--mjolnir-tile-extract',
      path.join(valhallaDir, 'tiles.tar'),
    ],
    { encoding: 'utf8' },
  );
  if (cfg.status !== 0) throw new Error(`valhalla_build_config failed: ${cfg.stderr}`);
  fs.writeFileSync(path.join(valhallaDir, 'valhalla.json'), cfg.stdout);
  prep.valhalla = timed(valhallaBin('valhalla_build_tiles'), ['-c', 'valhalla.json', pbf], {
    cwd: valhallaDir,
  });
  prep.valhalla.output_bytes = dirBytes(path.join(valhallaDir, 'tiles'));
  prep.valhalla.steps = 'valhalla_build_tiles (default config)';
}

// A weight change going live: 100 arcs of major roads. Quietway: the addon's updateArcs on the
// loaded graph (live when it returns), median of 11 rounds; OSRM: osrm-customize on MLD with a
// segment speed file of the same ways' first 100 node pairs.
log('weight change: Quietway updateArcs (100 arcs) and osrm-customize --segment-speed-file');
const addon = createRequire(import.meta.url)(path.join(root, 'addon/index.js'));
const majorWays = ways.filter((w) => ['primary', 'secondary', 'trunk'].includes(w.hw));
const pairs = [];
for (const w of majorWays) {
  for (let i = 0; i + 1 < w.nodes.length && pairs.length < 100; i++) pairs.push([w.nodes[i], w.nodes[i + 1]]);
}
/** The graph is loaded only for this (and released after): the server loads its own. */
async function quietwayUpdate() {
  const engine = await addon.loadCity(path.join(qwGraphs, 'nyc.qwg'));
  const arcs = [];
  for (const w of majorWays) {
    if (arcs.length < 100) arcs.push(...engine.arcsOfWay(w.id).slice(0, 100 - arcs.length));
  }
  const rounds = [];
  for (let r = 0; r < 11; r++) {
    const t = process.hrtime.bigint();
    engine.updateArcs(arcs.map((arc) => ({ arc, kind: 'factor', factor: r % 2 ? 1.5 : 2 })));
    rounds.push(Number(process.hrtime.bigint() - t) / 1e9);
    engine.updateArcs(arcs.map((arc) => ({ arc, kind: 'reset' })));
  }
  rounds.sort((a, b) => a - b);
  return { arcs: arcs.length, seconds: rounds[5], rounds: rounds.length, how: 'addon Engine.updateArcs' };
}
prep.quietway_update = await quietwayUpdate();
const speeds = path.join(work, 'speeds.csv');
fs.writeFileSync(speeds, `${pairs.map(([a, b]) => `${a},${b},5`).join('\n')}\n`);
prep.osrm_customize_update = {
  segments: pairs.length,
  ...timed(osrmBin('osrm-customize'), ['nyc.osrm', '--segment-speed-file', speeds], { cwd: osrmMld }),
  how: 'osrm-customize --segment-speed-file on the MLD data',
};
if (!cached) {
  fs.writeFileSync(
    manifestFile,
    JSON.stringify(
      {
        stamp,
        built_at: new Date().toISOString(),
        prep: { osrm_ch: prep.osrm_ch, osrm_mld: prep.osrm_mld, valhalla: prep.valhalla },
      },
      null,
      2,
    ),
  );
}
for (const k of ['osrm_ch', 'osrm_mld', 'valhalla']) prep[k].cached = cached;

// ---- Servers.

log('starting the servers');
const qwPort = await freePort();
const qwEnv = {
  ...process.env,
  QUIETWAY_DATA_DIR: qwDataDir,
  QUIETWAY_HOST: '127.0.0.1',
  QUIETWAY_PORT: String(qwPort),
  // Warnings and errors only (to its log): nothing is written per request.
  QUIETWAY_LOG_LEVEL: 'warn',
  QUIETWAY_SHARED_DATA_DIR: shared,
  QUIETWAY_RATE_LIMITS: JSON.stringify({ directions: { key: [100_000_000, 60] } }),
  // The load generator is one client on loopback; the peers have no per-client connection cap.
  QUIETWAY_MAX_CONNECTIONS_PER_CLIENT: '0',
};
// The key is written to the database before the server (a separate process) opens it.
const { buildApp } = await import('../../server/dist/app.js');
const { issueKey } = await import('../../server/dist/auth/keys.js');
const { loadConfig } = await import('../../server/dist/config.js');
const setup = await buildApp({ config: loadConfig(qwEnv) });
const { key } = issueKey(setup.repos, { kind: 'app', name: 'peers bench', source: null, legacyV1: false });
await setup.close();

// Each server is started alone (so that none loads while another does) and timed from its spawn to
// its first successful route between two fixed points of the sample (in the first copy of a tiling);
// its resident memory (VmRSS) is read then, and again after serving.
const PROBE = [
  [-74.009, 40.7075],
  [-73.9855, 40.75],
];
const servers = {};
function rssOf(child) {
  try {
    const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
}
/** How long a server is left idle after its first route before its settled memory is read. */
const SETTLE_MS = 5000;
/** The server listening on each port (the requests below name their port). */
const serverAt = new Map();
async function startAlone(name, what, port, [cmd, argv, opts], probe) {
  phase = `starting ${what}`;
  const t = process.hrtime.bigint();
  const child = start(name, what, cmd, argv, opts);
  serverAt.set(port, child);
  let last = 'no answer';
  let told = Date.now();
  // Up to 10 minutes: a tiled city's graph on a loaded shared machine takes minutes.
  for (const until = Date.now() + 600_000; Date.now() < until; ) {
    if (Date.now() - told > 60_000) {
      log(`${what}: no route yet (last: ${last.slice(0, 120)})`);
      told = Date.now();
    }
    try {
      const res = await fetch(probe.url, { method: probe.method, headers: probe.headers, body: probe.body });
      const body = await res.text();
      if (res.ok && probe.ok(JSON.parse(body))) {
        servers[name] = {
          process: what,
          startup_s: Number(process.hrtime.bigint() - t) / 1e9,
          rss_after_startup_bytes: rssOf(child),
        };
        log(`${what}: first route ${servers[name].startup_s.toFixed(2)} s after spawn`);
        // Resident memory once settled: a server may still be building in the background when it
        // first routes (Quietway builds walking's metric just after a city loads), and the reading
        // at the first route catches that work's peak.
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        servers[name].rss_settled_bytes = rssOf(child);
        return child;
      }
      last = `${res.status} ${body.slice(0, 200)}`;
    } catch (e) {
      last = e.message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  failServer(child, 'gave no route in 10 minutes', `its last answer: ${last}`);
}
const qwServer = await startAlone(
  'quietway',
  'quietway serve',
  qwPort,
  [process.execPath, [path.join(root, 'server/dist/cli.js'), 'serve'], { env: qwEnv }],
  {
    url: `http://127.0.0.1:${qwPort}/directions/v2/`,
    method: 'POST',
    headers: { apikey: key, 'content-type': 'application/json' },
    body: JSON.stringify({ coordinates: PROBE, supersafe: false }),
    ok: (b) => Boolean(b.route),
  },
);

/** osrm-routed on the data in `dir` with `algorithm` (CH or MLD), started alone. */
async function startOsrm(name, what, algorithm, dir) {
  const port = await freePort();
  const child = await startAlone(
    name,
    what,
    port,
    [
      osrmBin('osrm-routed'),
      ['--ip', '127.0.0.1', '--port', String(port), '--algorithm', algorithm, 'nyc.osrm'],
      { cwd: dir },
    ],
    {
      url: `http://127.0.0.1:${port}/route/v1/bicycle/${PROBE.map((p) => p.join(',')).join(';')}`,
      method: 'GET',
      ok: (b) => b.code === 'Ok',
    },
  );
  return { port, child };
}
const { port: osrmPort, child: osrmServer } = await startOsrm('osrm', 'osrm-routed', 'CH', osrmCh);

// osrm-routed on the MLD data too, alone, for its start-up and resident memory only (the memory
// goal of a city is set against it; the trips are served by CH, OSRM's faster algorithm), then
// stopped before the next server starts.
{
  const { child: mld } = await startOsrm('osrm_mld', 'osrm-routed (MLD)', 'MLD', osrmMld);
  servers.osrm_mld.peak_bytes = peakOf(mld);
  mld.retired = true;
  mld.kill('SIGTERM');
  await new Promise((r) => (hasEnded(mld) ? r() : mld.once('exit', r)));
}

const valhallaPort = await freePort();
const vcfg = JSON.parse(fs.readFileSync(path.join(valhallaDir, 'valhalla.json'), 'utf8'));
const ipc = path.join(os.tmpdir(), `quietway-peers-${process.pid}`);
vcfg.httpd.service.listen = `tcp://127.0.0.1:${valhallaPort}`;
vcfg.httpd.service.loopback = `ipc://${ipc}-loopback`;
vcfg.httpd.service.interrupt = `ipc://${ipc}-interrupt`;
vcfg.httpd.service.drain_seconds = 1;
fs.writeFileSync(path.join(work, 'valhalla.json'), JSON.stringify(vcfg));
const valhallaServer = await startAlone(
  'valhalla',
  'valhalla_service',
  valhallaPort,
  [valhallaBin('valhalla_service'), [path.join(work, 'valhalla.json')]],
  {
    url: `http://127.0.0.1:${valhallaPort}/route`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ locations: PROBE.map(([lon, lat]) => ({ lon, lat })), costing: 'bicycle' }),
    ok: (b) => Boolean(b.trip),
  },
);

// ---- The trips: random points in Manhattan below 42nd Street, 300 m and more apart as the crow
// flies, none touching the extract's East Village hole (the box of route-quality-bench). Each point
// lies within 25 m of a way a bicycle may use (read from the OSM ways, not from an engine) and is
// one that every engine takes and snaps within SNAP_M: so every engine is asked the same trips, and
// an unroutable trip is one an engine could not route, not a point it does not take. The points an
// engine turns down are counted per engine and reason (trips.points_rejected in the results).
// With --tiles K each point is drawn so in a copy of the sample chosen at random (every copy alike),
// so the trips cover the whole tiling and most cross copies and seams; the hole is avoided only by
// trips within one copy (across copies a trip crosses rivers, seams and holes alike, and excluding
// the holes of every copy on its way would leave mostly short trips).

const HOLE = [-74.0035, 40.7285, -73.965, 40.7375];
function touchesHole(a, b) {
  let [t0, t1] = [0, 1];
  const shift = TILES ? copyShift(copyOf(a)) : [0, 0];
  for (const axis of [0, 1]) {
    const d = b[axis] - a[axis];
    const [lo, hi] = [HOLE[axis] + shift[axis], HOLE[axis + 2] + shift[axis]];
    if (Math.abs(d) < 1e-15) {
      if (a[axis] < lo || a[axis] > hi) return false;
      continue;
    }
    let [u, v] = [(lo - a[axis]) / d, (hi - a[axis]) / d];
    if (u > v) [u, v] = [v, u];
    t0 = Math.max(t0, u);
    t1 = Math.min(t1, v);
    if (t0 > t1) return false;
  }
  return true;
}
const rideable = (hw) =>
  !['footway', 'steps', 'pedestrian', 'corridor', 'elevator', 'bridleway'].includes(hw);

// A request whose connection fails (the server closed it or refused it) is put down to the server it
// was sent to. If that server has ended, the run ends (failServer: how it ended and its log's tail).
// If it is still running, the request is sent once more and counted (retries, in the results); the
// same request failing again ends the run.
const retries = { quietway: 0, osrm: 0, valhalla: 0 };
const CONNECTION_ERRORS = new Set([
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
]);
/** The connection error under a failed fetch (`code: message`), or null if it is something else. */
function connectionError(e) {
  for (let c = e; c; c = c.cause) {
    for (const x of [c, ...(c.errors ?? [])]) {
      if (CONNECTION_ERRORS.has(x.code)) return `${x.code}: ${x.message}`;
    }
  }
  return null;
}
/** A failed fetch's error with its causes. */
function describe(e) {
  const parts = [];
  for (let c = e; c; c = c.cause) parts.push(c.code ? `${c.code}: ${c.message}` : c.message);
  return parts.join(' ← ');
}
/** Whether a server's process has ended, waiting up to `ms` for its end to be seen (its sockets close first). */
function endedWithin(child, ms) {
  if (hasEnded(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    child.once('exit', onExit);
  });
}
async function ask(r) {
  const server = serverAt.get(r.port);
  const what = `${r.method} ${r.path.length > 100 ? `${r.path.slice(0, 100)}…` : r.path}`;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`http://127.0.0.1:${r.port}${r.path}`, {
        method: r.method,
        headers: r.headers,
        body: r.body,
      });
      const text = await res.text();
      let body = {};
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body, text };
    } catch (e) {
      const why = connectionError(e);
      if (!why) failServer(server, 'did not answer', `${what}: ${describe(e)}`);
      if (await endedWithin(server, 1000))
        failServer(server, 'ended', `${howEnded(server)} (${what}: ${why})`);
      if (attempt > 1)
        failServer(server, 'failed a request twice', `${what}: ${why} (the server still running)`);
      retries[server.name]++;
      log(`${server.what} (pid ${server.pid}, still running): ${what}: ${why}; sending it once more`);
    }
  }
}

const SNAP_M = 50;
/** Where each engine snaps a point: metres away, or a reason it does not take it. */
const snapChecks = {
  // Quietway: a directions request from the point to itself reports where it snaps; a point
  // outside the city's coverage polygon is refused (400 CROSS_CITY_ROUTE).
  async quietway(p) {
    const a = await ask({
      port: qwPort,
      method: 'POST',
      path: '/directions/v2/',
      headers: { apikey: key, 'content-type': 'application/json' },
      body: JSON.stringify({ coordinates: [p, p], supersafe: false }),
    });
    if (a.body?.code === 'CROSS_CITY_ROUTE') return 'outside the city’s coverage polygon';
    const w = a.body?.waypoints?.[0]?.location;
    return w ? haversine(p, w) : `no snap (${a.status})`;
  },
  async osrm(p) {
    const a = await ask({ port: osrmPort, method: 'GET', path: `/nearest/v1/bicycle/${p[0]},${p[1]}` });
    const d = a.body?.waypoints?.[0]?.distance;
    return typeof d === 'number' ? d : `no snap (${a.status})`;
  },
  async valhalla(p) {
    const a = await ask({
      port: valhallaPort,
      method: 'POST',
      path: '/locate',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ locations: [{ lon: p[0], lat: p[1] }], costing: 'bicycle' }),
    });
    const edges = a.body?.[0]?.edges ?? [];
    if (!edges.length) return `no snap (${a.status})`;
    return Math.min(...edges.map((e) => haversine(p, [e.correlated_lon, e.correlated_lat])));
  },
};
const rejected = { osm_ways: 0, quietway: {}, osrm: {}, valhalla: {} };
const pointVerdicts = new Map();
/** Whether every engine takes the point and snaps it within SNAP_M (counting who turns it down). */
async function takenByAll(p) {
  const k = p.join(',');
  if (pointVerdicts.has(k)) return pointVerdicts.get(k);
  let ok = true;
  if (!nearWay(index, p, 25, rideable)) {
    rejected.osm_ways++;
    ok = false;
  } else {
    for (const [engineName, check] of Object.entries(snapChecks)) {
      const d = await check(p);
      const why = typeof d === 'number' ? (d > SNAP_M ? `snaps over ${SNAP_M} m away` : null) : d;
      if (why) {
        rejected[engineName][why] = (rejected[engineName][why] ?? 0) + 1;
        if (rejected[engineName][why] <= 5) {
          rejected[engineName][`${why}: examples`] = [
            ...(rejected[engineName][`${why}: examples`] ?? []),
            { point: p, snap_m: typeof d === 'number' ? Math.round(d) : null },
          ];
        }
        ok = false;
      }
    }
  }
  pointVerdicts.set(k, ok);
  return ok;
}
const samplePoint = manhattanPoints(25);
/** Copy t of a tiling: its shift from the sample in degrees (tile.py: t % K east, t / K north). */
function copyShift(t) {
  const [dlon, dlat] = tileInfo.copy_shift_deg;
  return [(t % TILES) * dlon, Math.floor(t / TILES) * dlat];
}
const copyPicks = new WeakMap();
/** The copy a drawn point was drawn in. */
const copyOf = (p) => copyPicks.get(p) ?? 0;
let copySeed = 2025;
function point() {
  const p = samplePoint();
  if (!TILES) return p;
  copySeed = (copySeed * 1103515245 + 12345) % 2147483648;
  const t = Math.floor((copySeed / 2147483648) * TILES * TILES);
  const [dx, dy] = copyShift(t);
  const q = [p[0] + dx, p[1] + dy];
  copyPicks.set(q, t);
  return q;
}
const trips = [];
phase = 'drawing the trips';
log(phase);
while (trips.length < TRIPS) {
  const a = point();
  const b = point();
  const crow = haversine(a, b);
  if (crow < 300 || (copyOf(a) === copyOf(b) && touchesHole(a, b))) continue;
  if (!(await takenByAll(a)) || !(await takenByAll(b))) continue;
  trips.push({ from: a, to: b, crow_m: crow });
}

// ---- The requests, per engine and setting.

const DEPARTURE = { day: '2026-06-17T12:00', night: '2026-06-17T23:30' };
const qwBody = (t, supersafe, when) =>
  JSON.stringify({
    coordinates: [t.from, t.to],
    supersafe,
    departure_time: DEPARTURE[when],
    nighttime: when === 'night',
  });
const osrmPath = (t) =>
  `/route/v1/bicycle/${t.from[0]},${t.from[1]};${t.to[0]},${t.to[1]}?steps=true&overview=full&geometries=geojson`;
const valhallaBody = (t, useRoads) =>
  JSON.stringify({
    locations: [
      { lon: t.from[0], lat: t.from[1] },
      { lon: t.to[0], lat: t.to[1] },
    ],
    costing: 'bicycle',
    costing_options: { bicycle: { use_roads: useRoads } },
    directions_options: { units: 'kilometers' },
  });
const qwHeaders = { apikey: key, 'content-type': 'application/json' };
const VARIANTS = [
  {
    id: 'quietway_direct_day',
    label: 'Quietway Direct, day',
    engine: 'quietway',
    ref: 'quietway_direct_day',
    req: (t) => ({
      port: qwPort,
      method: 'POST',
      path: '/directions/v2/',
      headers: qwHeaders,
      body: qwBody(t, false, 'day'),
    }),
  },
  {
    id: 'quietway_supersafe_day',
    label: 'Quietway SuperSafe, day',
    engine: 'quietway',
    ref: 'quietway_direct_day',
    req: (t) => ({
      port: qwPort,
      method: 'POST',
      path: '/directions/v2/',
      headers: qwHeaders,
      body: qwBody(t, true, 'day'),
    }),
  },
  {
    id: 'quietway_direct_night',
    label: 'Quietway Direct, night',
    engine: 'quietway',
    ref: 'quietway_direct_day',
    req: (t) => ({
      port: qwPort,
      method: 'POST',
      path: '/directions/v2/',
      headers: qwHeaders,
      body: qwBody(t, false, 'night'),
    }),
  },
  {
    id: 'quietway_supersafe_night',
    label: 'Quietway SuperSafe, night',
    engine: 'quietway',
    ref: 'quietway_direct_day',
    req: (t) => ({
      port: qwPort,
      method: 'POST',
      path: '/directions/v2/',
      headers: qwHeaders,
      body: qwBody(t, true, 'night'),
    }),
  },
  {
    id: 'osrm_bicycle',
    label: 'OSRM bicycle (CH)',
    engine: 'osrm',
    ref: 'osrm_bicycle',
    req: (t) => ({ port: osrmPort, method: 'GET', path: osrmPath(t) }),
  },
  ...[1, 0.25, 0].map((u) => ({
    id: `valhalla_use_roads_${u}`,
    label: `Valhalla bicycle, use_roads ${u}`,
    engine: 'valhalla',
    ref: 'valhalla_use_roads_1',
    req: (t) => ({
      port: valhallaPort,
      method: 'POST',
      path: '/route',
      headers: { 'content-type': 'application/json' },
      body: valhallaBody(t, u),
    }),
  })),
];

// ---- Routes.

phase = `planning ${trips.length} trips × ${VARIANTS.length} settings`;
log(phase);
const planned = Object.fromEntries(VARIANTS.map((v) => [v.id, new Array(trips.length).fill(null)]));
const unroutableExamples = Object.fromEntries(VARIANTS.map((v) => [v.id, []]));
// Every trip whose route has a U-turn step, per setting: where and on what (for looking into them).
const uturnExamples = Object.fromEntries(VARIANTS.map((v) => [v.id, []]));
let next = 0;
async function worker() {
  for (let i = next++; i < trips.length; i = next++) {
    for (const v of VARIANTS) {
      const answer = await ask(v.req(trips[i]));
      const route = answer.status === 200 ? normalize(v.engine, answer.body) : null;
      planned[v.id][i] = route
        ? { ...classify(index, route.coords), ...pushedOn(index, route.pushed), steps: route.steps }
        : null;
      // Each U-turn with its step's index (0: the departure) and the route's step count.
      const uturns = (route?.steps ?? []).map((st, k) => ({ ...st, step: k })).filter((st) => st.uturn);
      if (uturns.length) {
        uturnExamples[v.id].push({
          trip: i,
          from: trips[i].from,
          to: trips[i].to,
          steps: route.steps.length,
          uturns,
        });
      }
      if (!route && unroutableExamples[v.id].length < 5) {
        unroutableExamples[v.id].push({
          trip: trips[i],
          status: answer.status,
          answer: answer.text.slice(0, 300),
        });
      }
    }
  }
}
await Promise.all([worker(), worker()]);
const routes = {};
for (const v of VARIANTS) {
  routes[v.id] = {
    label: v.label,
    reference: v.ref,
    ...summarize(
      trips.map((t, i) => ({ crow_m: t.crow_m, route: planned[v.id][i], ref: planned[v.ref][i] })),
    ),
    unroutable_examples: unroutableExamples[v.id],
    uturn_trips: uturnExamples[v.id].sort((a, b) => a.trip - b.trip),
  };
}

// The same measures against ONE common baseline for every engine and setting: OSRM's bicycle route
// on the same trip (a peer's, with its stock profile: the most direct bicycle route a self-hoster
// would otherwise serve), over the trips every setting routes. Against each engine's own most direct
// route (above, the issue's definition) an engine whose direct route already avoids bare major roads
// has less left to cut and pays more per metre it still avoids; one baseline compares where each
// setting rides, on the same trips.
const BASELINE = 'osrm_bicycle';
const commonIdx = trips.map((_, i) => i).filter((i) => VARIANTS.every((v) => planned[v.id][i]));
for (const v of VARIANTS) {
  let length = 0;
  let bare = 0;
  let baseLength = 0;
  let baseBare = 0;
  const over = [];
  for (const i of commonIdx) {
    const r = planned[v.id][i];
    const b = planned[BASELINE][i];
    length += r.length_m;
    bare += r.bare_major_m;
    baseLength += b.length_m;
    baseBare += b.bare_major_m;
    over.push(r.length_m / b.length_m);
  }
  over.sort((a, b) => a - b);
  const avoided = baseBare - bare;
  routes[v.id].common = {
    baseline: BASELINE,
    trips: commonIdx.length,
    length_km: length / 1000,
    bare_major_road_km: bare / 1000,
    baseline_length_km: baseLength / 1000,
    baseline_bare_major_road_km: baseBare / 1000,
    length_over_baseline_total: baseLength > 0 ? length / baseLength : null,
    length_over_baseline_median: over.length ? quantile(over, 0.5) : null,
    bare_major_cut: baseBare > 0 ? avoided / baseBare : null,
    // Extra metres ridden per bare major-road metre avoided against the baseline; null when the
    // setting avoids none (negative: it avoids them on a shorter route).
    extra_m_per_m_avoided: avoided > 0 ? (length - baseLength) / avoided : null,
  };
}

// ---- Serving: the trips every served setting routes, with steps and full geometry, over HTTP.

const SERVED = {
  quietway: 'quietway_supersafe_day',
  osrm: 'osrm_bicycle',
  valhalla: 'valhalla_use_roads_0.25',
};
const servedTrips = trips.filter((_, i) => Object.values(SERVED).every((id) => planned[id][i]));
const serving = {};
for (const [engineName, id] of Object.entries(SERVED)) {
  const v = VARIANTS.find((x) => x.id === id);
  const reqs = servedTrips.map((t) => v.req(t));
  serving[engineName] = { setting: v.label, trips: reqs.length, runs: {} };
  for (const c of CONNECTIONS) {
    phase = `serving: ${engineName} at ${c} connection(s), ${DURATION} s`;
    log(phase);
    const res = await autocannon({
      url: `http://127.0.0.1:${reqs[0].port}`,
      connections: c,
      duration: DURATION,
      requests: reqs.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })),
    });
    // autocannon counts a connection that fails (and opens another); a server that ended has ended
    // the run already (failServer).
    if (res.errors) log(`${engineName} at ${c} connection(s): ${res.errors} connection errors`);
    const l = res.latency;
    serving[engineName].runs[c] = {
      requests_per_s: res.requests.average,
      p50_ms: l.p50,
      p90_ms: l.p90,
      p99_ms: l.p99,
      percentiles_ms: {
        p1: l.p1,
        p2_5: l.p2_5,
        p10: l.p10,
        p25: l.p25,
        p50: l.p50,
        p75: l.p75,
        p90: l.p90,
        p97_5: l.p97_5,
        p99: l.p99,
        p99_9: l.p99_9,
        max: l.max,
      },
      requests: res.requests.total,
      errors: res.errors,
      non_2xx: res.non2xx,
      mean_response_bytes: res.requests.total ? Math.round(res.throughput.total / res.requests.total) : 0,
    };
  }
}
phase = 'reading the servers’ memory';
serving.quietway.server_peak_memory_bytes = peakOf(qwServer);
serving.osrm.server_peak_memory_bytes = peakOf(osrmServer);
serving.valhalla.server_peak_memory_bytes = peakOf(valhallaServer);
for (const [name, child] of [
  ['quietway', qwServer],
  ['osrm', osrmServer],
  ['valhalla', valhallaServer],
]) {
  servers[name].rss_after_serving_bytes = rssOf(child);
  servers[name].peak_bytes = peakOf(child);
}
stopAll();
// valhalla_service drains for `drain_seconds` (set to 1 above); anything still up after 10 s is killed.
await Promise.all(
  children.map((c) =>
    c.exitCode === null && c.signalCode === null
      ? new Promise((r) => {
          const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
          c.once('exit', () => {
            clearTimeout(kill);
            r();
          });
        })
      : null,
  ),
);
for (const f of [`${ipc}-loopback`, `${ipc}-interrupt`]) fs.rmSync(f, { force: true });
fs.rmSync(work, { recursive: true, force: true });

// ---- Ratios and goals (issue 25), within this run.

const rps = (e) => serving[e].runs[8].requests_per_s;
const p99 = (e) => serving[e].runs[8].p99_ms;
const ss = routes.quietway_supersafe_day;
const v0 = routes.valhalla_use_roads_0;
const ratios = {
  rps8_over_osrm: rps('quietway') / rps('osrm'),
  rps8_over_valhalla: rps('quietway') / rps('valhalla'),
  p99_8_osrm_over_quietway: p99('osrm') / p99('quietway'),
  p99_8_valhalla_over_quietway: p99('valhalla') / p99('quietway'),
  build_speedup_over_osrm_ch: prep.osrm_ch.seconds / prep.quietway.seconds,
  build_speedup_over_valhalla: prep.valhalla.seconds / prep.quietway.seconds,
  build_memory_osrm_over_quietway: prep.osrm_ch.peak_memory_bytes / prep.quietway.peak_memory_bytes,
  build_memory_valhalla_over_quietway: prep.valhalla.peak_memory_bytes / prep.quietway.peak_memory_bytes,
  update_speedup_over_osrm_customize: prep.osrm_customize_update.seconds / prep.quietway_update.seconds,
  supersafe_cut_over_valhalla_0: v0.bare_major_cut > 0 ? ss.bare_major_cut / v0.bare_major_cut : null,
  supersafe_median_detour: ss.length_over_direct_median,
  valhalla_0_median_detour: v0.length_over_direct_median,
  supersafe_extra_m_per_m_avoided: ss.extra_m_per_m_avoided,
  valhalla_0_extra_m_per_m_avoided: v0.extra_m_per_m_avoided,
  // Against the common baseline (OSRM bicycle's route on the same trips; what the gate compares).
  common_baseline: BASELINE,
  common_trips: commonIdx.length,
  supersafe_common_cut: ss.common.bare_major_cut,
  valhalla_0_common_cut: v0.common.bare_major_cut,
  supersafe_common_cut_over_valhalla_0:
    v0.common.bare_major_cut > 0 ? ss.common.bare_major_cut / v0.common.bare_major_cut : null,
  supersafe_common_extra_m_per_m_avoided: ss.common.extra_m_per_m_avoided,
  valhalla_0_common_extra_m_per_m_avoided: v0.common.extra_m_per_m_avoided,
  supersafe_common_length_over_baseline: ss.common.length_over_baseline_total,
  valhalla_0_common_length_over_baseline: v0.common.length_over_baseline_total,
  // The bike walked: each setting's share of its metres pushed (Quietway's read from its step times,
  // OSRM's from its `pushing bike` mode), over the trips each routes with its reference.
  direct_pushed_share: routes.quietway_direct_day.pushed_share,
  supersafe_pushed_share: ss.pushed_share,
  osrm_pushed_share: routes.osrm_bicycle.pushed_share,
  osrm_over_direct_pushed_share:
    routes.quietway_direct_day.pushed_share > 0
      ? routes.osrm_bicycle.pushed_share / routes.quietway_direct_day.pushed_share
      : null,
  supersafe_pushed_share_goal: Math.max(0.05, 1.5 * routes.quietway_direct_day.pushed_share),
};
const ge = (x, g) => x !== null && x >= g;
const le = (x, g) => x !== null && x <= g;
const goals = [
  [
    'HTTP req/s at 8 connections ≥ 1.5× osrm-routed (CH)',
    ratios.rps8_over_osrm,
    '≥ 1.5×',
    ge(ratios.rps8_over_osrm, 1.5),
  ],
  [
    'HTTP req/s at 8 connections ≥ 3× valhalla_service',
    ratios.rps8_over_valhalla,
    '≥ 3×',
    ge(ratios.rps8_over_valhalla, 3),
  ],
  [
    'p99 at 8 connections no worse than osrm-routed (theirs / ours)',
    ratios.p99_8_osrm_over_quietway,
    '≥ 1',
    ge(ratios.p99_8_osrm_over_quietway, 1),
  ],
  [
    'p99 at 8 connections no worse than valhalla_service (theirs / ours)',
    ratios.p99_8_valhalla_over_quietway,
    '≥ 1',
    ge(ratios.p99_8_valhalla_over_quietway, 1),
  ],
  [
    'graph build ≥ 20× faster than OSRM extract + contract',
    ratios.build_speedup_over_osrm_ch,
    '≥ 20×',
    ge(ratios.build_speedup_over_osrm_ch, 20),
  ],
  [
    'graph build ≥ 3× faster than Valhalla tiles',
    ratios.build_speedup_over_valhalla,
    '≥ 3×',
    ge(ratios.build_speedup_over_valhalla, 3),
  ],
  [
    'build peak memory no more than OSRM’s (theirs / ours)',
    ratios.build_memory_osrm_over_quietway,
    '≥ 1',
    ge(ratios.build_memory_osrm_over_quietway, 1),
  ],
  [
    'build peak memory no more than Valhalla’s (theirs / ours)',
    ratios.build_memory_valhalla_over_quietway,
    '≥ 1',
    ge(ratios.build_memory_valhalla_over_quietway, 1),
  ],
  [
    'weight change live ≥ 20× faster than osrm-customize',
    ratios.update_speedup_over_osrm_customize,
    '≥ 20×',
    ge(ratios.update_speedup_over_osrm_customize, 20),
  ],
  [
    'SuperSafe bare major-road cut ≥ 3× Valhalla’s at use_roads 0 (each against its own most direct)',
    ratios.supersafe_cut_over_valhalla_0,
    '≥ 3×',
    ge(ratios.supersafe_cut_over_valhalla_0, 3),
  ],
  [
    'Direct pushes no more of its metres than OSRM bicycle (OSRM’s pushed share / Direct’s)',
    ratios.osrm_over_direct_pushed_share,
    '≥ 1',
    ge(ratios.osrm_over_direct_pushed_share, 1),
  ],
  [
    `SuperSafe’s pushed share ≤ max(5 %, 1.5 × Direct’s) = ${(ratios.supersafe_pushed_share_goal * 100).toFixed(1)} %`,
    ratios.supersafe_pushed_share,
    `≤ ${ratios.supersafe_pushed_share_goal.toFixed(3)}`,
    le(ratios.supersafe_pushed_share, ratios.supersafe_pushed_share_goal),
  ],
  [
    'SuperSafe median length ≤ 1.15× Direct',
    ratios.supersafe_median_detour,
    '≤ 1.15',
    le(ratios.supersafe_median_detour, 1.15),
  ],
  [
    'SuperSafe ≤ 1.5 extra metres per bare major-road metre avoided (against Direct)',
    ratios.supersafe_extra_m_per_m_avoided,
    '≤ 1.5',
    le(ratios.supersafe_extra_m_per_m_avoided, 1.5),
  ],
  [
    'SuperSafe bare major-road cut ≥ 3× Valhalla’s at use_roads 0, both against OSRM bicycle’s route',
    ratios.supersafe_common_cut_over_valhalla_0,
    '≥ 3×',
    ge(ratios.supersafe_common_cut_over_valhalla_0, 3),
  ],
  [
    'SuperSafe ≤ 1.5 extra metres per bare major-road metre avoided, against OSRM bicycle’s route',
    ratios.supersafe_common_extra_m_per_m_avoided,
    '≤ 1.5',
    le(ratios.supersafe_common_extra_m_per_m_avoided, 1.5),
  ],
].map(([goal, value, target, met]) => ({ goal, value, target, met }));

const result = {
  name: 'peers',
  quick,
  date: new Date().toISOString(),
  machine: { ...machine(), memory_bytes: os.totalmem(), load_average_at_end: os.loadavg() },
  versions: { quietway: engineVersionOrCommit(), ...pins },
  extract: EXTRACT,
  tiles: tileInfo ? { k: TILES, ...tileInfo } : null,
  trips: {
    count: trips.length,
    served: servedTrips.length,
    min_crow_m: 300,
    seed: 25,
    snap_m: SNAP_M,
    points_checked: pointVerdicts.size,
    points_rejected: rejected,
    crow_m_median: quantile(
      trips.map((t) => t.crow_m).sort((a, b) => a - b),
      0.5,
    ),
    crow_m_max: Math.max(...trips.map((t) => t.crow_m)),
    // The copies of a tiling the trips start or end in (of K × K).
    copies_reached: TILES ? new Set(trips.flatMap((t) => [copyOf(t.from), copyOf(t.to)])).size : null,
    box: TILES
      ? `Manhattan below 42nd Street in a copy of the sample drawn at random for each point (${TILES * TILES} copies), the East Village hole excluded within a copy`
      : 'Manhattan below 42nd Street, East Village hole excluded',
  },
  serving_duration_s: DURATION,
  preparation: prep,
  servers,
  // Requests sent once more after a connection error, their server still running (ask).
  retries,
  serving,
  routes,
  ratios,
  goals,
};
function engineVersionOrCommit() {
  try {
    return addon.engineVersion();
  } catch {
    return machine().commit;
  }
}

// ---- Output.

fs.mkdirSync(outDir, { recursive: true });
const md = markdown(result);
const outputs = [
  [`peers${suffix}.json`, `${JSON.stringify(result, null, 2)}\n`],
  [`peers${suffix}.md`, md],
  [`peers${suffix}-latency.svg`, latencySvg(result)],
  [`peers${suffix}-tradeoff.svg`, tradeoffSvg(result)],
];
for (const [name, text] of outputs) fs.writeFileSync(path.join(outDir, name), text);
console.log(md);
console.log(`written bench/out/${outputs.map(([name]) => name).join(', ')}`);

/** Who turned down how many candidate points, and why (the examples left out). */
function rejectedText(rej) {
  const parts = [`${rej.osm_ways} not within 25 m of a rideable OSM way`];
  for (const e of ['quietway', 'osrm', 'valhalla']) {
    for (const [why, n] of Object.entries(rej[e])) if (typeof n === 'number') parts.push(`${e}: ${n} ${why}`);
  }
  return `candidate points turned down: ${parts.join('; ')}`;
}

function markdown(r) {
  const s = (x) => (x === null || x === undefined ? '–' : x.toFixed(2));
  const mb = (x) => (x === null || x === undefined ? '–' : (x / 1e6).toFixed(0));
  const lines = [];
  lines.push(
    `Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${(r.machine.memory_bytes / 2 ** 30).toFixed(0)} GiB; commit ${r.machine.commit}; ${r.date.slice(0, 16)} UTC; extract ${r.extract}; ${r.trips.count} trips (${r.trips.served} routed by every served setting; ${(r.trips.crow_m_median / 1000).toFixed(1)} km median and ${(r.trips.crow_m_max / 1000).toFixed(1)} km longest as the crow flies; points every engine snaps within ${r.trips.snap_m} m, ${rejectedText(r.trips.points_rejected)})${r.quick ? '; --quick' : ''}`,
  );
  if (r.tiles) {
    lines.push(
      '',
      `**A tiling, not a real city**: the sample ${r.tiles.sample} tiled ${r.tiles.k} × ${r.tiles.k} by bench/scale/tile.py (${r.tiles.nodes} OSM nodes, ${r.tiles.ways} ways of which ${r.tiles.seam_ways} seam streets joining the copies); the trips' points are drawn in copies chosen at random (${r.trips.copies_reached} of ${r.tiles.k * r.tiles.k} copies reached). The peers gate is not applied to tiled runs; the goals below are the sample's, shown for reference.`,
    );
  }
  lines.push(
    '',
    '**Preparation**',
    '',
    '| engine | steps | wall (s) | peak memory (MB) | output (MB) |',
    '|---|---|---|---|---|',
  );
  const p = r.preparation;
  for (const [name, x] of [
    ['Quietway', p.quietway],
    ['Quietway, place index', p.quietway_places],
    ['OSRM CH', p.osrm_ch],
    ['OSRM MLD', p.osrm_mld],
    ['Valhalla', p.valhalla],
  ]) {
    lines.push(
      `| ${name} | ${x.steps}${x.cached ? ' (cached from an earlier run)' : ''} | ${s(x.seconds)} | ${mb(x.peak_memory_bytes)} | ${mb(x.output_bytes)} |`,
    );
  }
  lines.push(
    `| Quietway, weight change live | ${p.quietway_update.arcs} arcs, ${p.quietway_update.how} (median of ${p.quietway_update.rounds}) | ${(p.quietway_update.seconds * 1000).toFixed(2)} ms | – | – |`,
  );
  lines.push(
    `| OSRM MLD, weight change live | ${p.osrm_customize_update.segments} segments, ${p.osrm_customize_update.how} | ${s(p.osrm_customize_update.seconds)} | ${mb(p.osrm_customize_update.peak_memory_bytes)} | – |`,
  );
  lines.push(
    '',
    '**Servers** (each started alone; start-up: spawn to its first successful route; resident memory (VmRSS) then, 5 s later with the server idle, and after serving the trips below; peak: VmHWM)',
    '',
    '| engine | process | start-up (s) | resident after start-up (MB) | settled (MB) | resident after serving (MB) | peak (MB) |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [name, x] of Object.entries(r.servers)) {
    lines.push(
      `| ${name} | ${x.process} | ${s(x.startup_s)} | ${mb(x.rss_after_startup_bytes)} | ${mb(x.rss_settled_bytes)} | ${mb(x.rss_after_serving_bytes)} | ${mb(x.peak_bytes)} |`,
    );
  }
  const retried = Object.entries(r.retries ?? {}).filter(([, n]) => n > 0);
  lines.push(
    '',
    `Requests sent once more after a connection error, the server still running: ${retried.length ? retried.map(([name, n]) => `${name} ${n}`).join(', ') : 'none'}`,
  );
  lines.push(
    '',
    `**Serving** (autocannon, ${r.serving_duration_s} s per row; the same trips with steps and full geometry)`,
    '',
  );
  lines.push(
    '| engine | setting | connections | req/s | p50 (ms) | p99 (ms) | non-2xx | mean body (kB) |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const [name, x] of Object.entries(r.serving)) {
    for (const [c, run] of Object.entries(x.runs)) {
      lines.push(
        `| ${name} | ${x.setting} | ${c} | ${run.requests_per_s.toFixed(0)} | ${run.p50_ms} | ${run.p99_ms} | ${run.non_2xx + run.errors} | ${(run.mean_response_bytes / 1000).toFixed(1)} |`,
      );
    }
  }
  lines.push(
    '',
    '**Routes** (lengths from each route’s geometry; ways and their tags from the extract, the same for every engine)',
    '',
  );
  const cols = Object.values(r.routes);
  lines.push(
    `| measure | ${cols.map((c) => c.label).join(' | ')} |`,
    `|---|${cols.map(() => '---').join('|')}|`,
  );
  const row = (name, f) => lines.push(`| ${name} | ${cols.map(f).join(' | ')} |`);
  row('length / crow-fly, median', (c) => s(c.length_over_crow_median));
  row('km ridden / km of the same engine’s most direct', (c) => s(c.length_over_direct_total));
  row(
    'length / same engine’s most direct, median (p90)',
    (c) => `${s(c.length_over_direct_median)} (${s(c.length_over_direct_p90)})`,
  );
  row('km on trunk/primary/secondary', (c) => c.major_road_km.toFixed(1));
  row('km on those with no bike lane or track', (c) => c.bare_major_road_km.toFixed(1));
  row('cut in those km vs most direct', (c) => `${(c.bare_major_cut * 100).toFixed(0)} %`);
  row('extra metres per such metre avoided', (c) => s(c.extra_m_per_m_avoided));
  row('km ridden / km pushed (pushed share)', (c) =>
    c.pushed_km === null
      ? '– (not said)'
      : `${c.ridden_km.toFixed(1)} / ${c.pushed_km.toFixed(1)} (${(c.pushed_share * 100).toFixed(1)} %)`,
  );
  row('cut over ridden metres (bare major share of the metres ridden)', (c) =>
    c.bare_major_cut_over_ridden === null ? '–' : `${(c.bare_major_cut_over_ridden * 100).toFixed(0)} %`,
  );
  row('steps per km', (c) => s(c.steps_per_km));
  row('steps under 15 m', (c) => `${(c.short_step_share * 100).toFixed(1)} %`);
  row('U-turn steps', (c) => String(c.uturn_steps));
  row('unroutable trips', (c) => String(c.unroutable));
  row('metres matched to no way', (c) => `${(c.unmatched_share * 100).toFixed(1)} %`);
  const c0 = cols[0].common;
  lines.push(
    `| **against one baseline for all: OSRM bicycle’s route, on the ${c0.trips} trips every setting routes** |${cols.map(() => '').join(' |')} |`,
  );
  row('km ridden (OSRM bicycle: the baseline)', (c) => c.common.length_km.toFixed(1));
  row('length / baseline’s, median', (c) => s(c.common.length_over_baseline_median));
  row('km on bare major roads', (c) => c.common.bare_major_road_km.toFixed(1));
  row('cut in those km vs the baseline', (c) => `${(c.common.bare_major_cut * 100).toFixed(0)} %`);
  row('extra metres per such metre avoided', (c) => s(c.common.extra_m_per_m_avoided));
  lines.push(
    '',
    '**Goals** (issue 25; ratios within this run)',
    '',
    '| goal | measured | target | |',
    '|---|---|---|---|',
  );
  for (const g of r.goals)
    lines.push(`| ${g.goal} | ${s(g.value)} | ${g.target} | ${g.met ? 'met' : 'missed'} |`);
  return `${lines.join('\n')}\n`;
}
