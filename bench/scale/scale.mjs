// The engine at city scale. No whole-city extract can be downloaded here, so the sample extract is
// tiled k × k (bench/scale/tile.py: copies side by side, renumbered, joined at the seams by short
// streets) and each tiling is measured as a city: the graph build (wall time and peak memory under
// /usr/bin/time), the graph file, and the engine on it as the server loads it (target/release/
// scale-bench: load time, memory by part, queries, directions, customization, live changes).
// k = 1 goes through tile.py too, so every size is made the same way. Prints a markdown table per k,
// the memory by part, how each cost grows with the junctions; writes bench/results/scale.json and
// bench/results/scale.svg. These are tilings of the sample, not a real city: the same streets,
// density and tags repeated, joined by a few seam streets.
//
//   node bench/scale/scale.mjs --venv DIR [--tiles 1,2,4] [--quick] [--sample FILE] [--peers]
//
// --sample: a file in the shared data's osm/ folder or a path (default
// nyc-manhattan-below-42nd.osm.pbf). --peers: OSRM's and Valhalla's build, resident memory and
// start-up at the largest k, from bench/out/peers-tilesK.json when it is fresh (under 24 hours old,
// same sample; its commit is shown), else from a `bench/peers/peers.mjs --tiles K --quick` run.
// Started by bench/scale/run.sh (`npm run bench:scale`), which provides the virtual environment.
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root, shared } from '../common.mjs';
import { esc, frame, H, M, scale, W } from '../peers/svg.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const quick = args.includes('--quick');
const withPeers = args.includes('--peers');
const tiles = opt('--tiles', '1,2,4')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
if (!tiles.length || tiles.some((k) => !Number.isInteger(k) || k < 1)) {
  throw new Error('--tiles takes a list of whole numbers ≥ 1, e.g. 1,2,4');
}
const sampleArg = opt('--sample', 'nyc-manhattan-below-42nd.osm.pbf');
const sample = fs.existsSync(sampleArg) ? path.resolve(sampleArg) : path.join(shared, 'osm', sampleArg);
if (!fs.existsSync(sample)) throw new Error(`no sample extract at ${sample}`);
const venv = path.resolve(opt('--venv', path.join(root, 'bench/peers/.venv')));
const python = path.join(venv, 'bin/python');
if (!fs.existsSync(python)) throw new Error(`no Python at ${python}; run bench/scale/run.sh`);
const tilePy = path.join(root, 'bench/scale/tile.py');
const buildGraph = path.join(root, 'target/release/quietway-build-graph');
const scaleBench = path.join(root, 'target/release/scale-bench');
for (const f of [buildGraph, scaleBench]) {
  if (!fs.existsSync(f)) throw new Error(`${f} missing; run bench/scale/run.sh`);
}
const hasTime = fs.existsSync('/usr/bin/time');
const log = (...m) => console.error('[scale]', ...m);
const started = new Date();

/** Runs a command to its end: its output, wall seconds and (under /usr/bin/time) peak resident bytes. */
function run(cmd, argv, { stdout = 'pipe' } = {}) {
  const memFile = path.join(os.tmpdir(), `quietway-scale-${process.pid}-${Date.now()}.mem`);
  const t = process.hrtime.bigint();
  const res = hasTime
    ? spawnSync('/usr/bin/time', ['-f', '%M', '-o', memFile, cmd, ...argv], {
        encoding: 'utf8',
        stdio: ['ignore', stdout, 'pipe'],
        maxBuffer: 1 << 28,
      })
    : spawnSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', stdout, 'pipe'], maxBuffer: 1 << 28 });
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  // Progress lines of the command go on to standard error.
  if (res.stderr) process.stderr.write(res.stderr.replace(/^(?=.)/gm, '    '));
  if (res.status !== 0) throw new Error(`${path.basename(cmd)} failed (${res.status ?? res.signal})`);
  let peak = null;
  if (hasTime) {
    peak = Number(fs.readFileSync(memFile, 'utf8').trim().split('\n').pop()) * 1024;
    fs.rmSync(memFile, { force: true });
  }
  return { stdout: res.stdout ?? '', seconds, peak_rss_bytes: peak };
}

const pyInfo = spawnSync(
  python,
  [
    '-c',
    'import json, sys, importlib.metadata as m; print(json.dumps([sys.version.split()[0], m.version("osmium")]))',
  ],
  { encoding: 'utf8' },
);
const [pythonVersion, osmiumVersion] = JSON.parse(pyInfo.stdout || '[null, null]');
const gitOut = (cmd) => {
  try {
    return execSync(cmd, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

const junctions = (r) => r.engine.junctions ?? r.build.summary.graph_nodes;
const reportFile = opt('--report', null);
// --report FILE prints the tables and draws the picture again from a saved results file.
const result = reportFile ? JSON.parse(fs.readFileSync(reportFile, 'utf8')) : measure();
if (!reportFile) {
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results/scale.json'), `${JSON.stringify(result, null, 2)}\n`);
}
fs.writeFileSync(path.join(root, 'bench/results/scale.svg'), svg(result));
console.log(markdown(result));
console.log(`written ${reportFile ? '' : 'bench/results/scale.json, '}bench/results/scale.svg`);

/** Tiles, builds and measures every k (and the peers when asked): the results document. */
function measure() {
  // ---- Each k: tile, build, measure.

  const runs = [];
  for (const k of tiles) {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), `quietway-scale-k${k}-`));
    try {
      const pbf = path.join(work, `tiled-${k}x${k}.osm.pbf`);
      const boundary = path.join(work, `tiled-${k}x${k}.geojson`);
      log(`k=${k}: tiling the sample ${k} × ${k} (tile.py)`);
      const t = run(python, [tilePy, sample, String(k), pbf, boundary]);
      const tile = JSON.parse(t.stdout.trim().split('\n').pop());
      log(
        `k=${k}: ${tile.nodes} OSM nodes, ${tile.ways} ways (${tile.seam_ways} seam streets); building the graph`,
      );
      const out = path.join(work, 'graphs');
      const summaryFile = path.join(work, 'summary.json');
      const b = run(buildGraph, [
        '--city',
        'nyc',
        '--osm',
        pbf,
        '--out',
        out,
        '--boundary',
        boundary,
        '--shared-data',
        shared,
        '--quiet',
        '--summary-json',
        summaryFile,
      ]);
      const summary = JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
      const qwg = path.join(out, 'nyc.qwg');
      const fileBytes = fs.statSync(qwg).size;
      const placesFile = path.join(out, 'nyc.places.ndjson');
      log(
        `k=${k}: built in ${b.seconds.toFixed(1)} s (${summary.graph_nodes} junctions, ${mb(b.peak_rss_bytes)} MB peak); scale-bench`,
      );
      const e = run(scaleBench, ['--graph', qwg, ...(quick ? ['--quick'] : [])]);
      const engine = JSON.parse(e.stdout);
      runs.push({
        k,
        tile: { ...tile, seconds: t.seconds, peak_rss_bytes: t.peak_rss_bytes },
        build: {
          wall_s: b.seconds,
          peak_rss_bytes: b.peak_rss_bytes,
          places_s: summary.places?.seconds ?? null,
          summary,
        },
        file_bytes: fileBytes,
        places_bytes: fs.existsSync(placesFile) ? fs.statSync(placesFile).size : null,
        engine_run: { wall_s: e.seconds, peak_rss_bytes: e.peak_rss_bytes },
        engine,
      });
      log(`k=${k}: done (load ${engine.load_s?.toFixed(1)} s, ${mb(engine.memory_engine_bytes)} MB)`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  // ---- The peers at the largest k.

  let peers = null;
  if (withPeers) peers = peersAt(tiles[tiles.length - 1]);

  /** OSRM's, Valhalla's and Quietway's server figures from a peers run on the sample tiled k × k. */
  function peersAt(k) {
    const file = path.join(root, `bench/out/peers-tiles${k}.json`);
    const fresh = (r) =>
      r?.tiles?.k === k &&
      path.basename(r.tiles.sample ?? '') === path.basename(sample) &&
      Date.now() - Date.parse(r.date) < 24 * 3600e3;
    let r = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
    let reused = true;
    if (!fresh(r)) {
      reused = false;
      log(`peers: bench/peers/peers.mjs --tiles ${k} --quick (OSRM, Valhalla and Quietway on the tiling)`);
      const res = spawnSync(
        process.execPath,
        [
          path.join(root, 'bench/peers/peers.mjs'),
          '--venv',
          venv,
          '--tiles',
          String(k),
          '--sample',
          sample,
          '--quick',
        ],
        // Its table goes to standard error here: standard output is this benchmark's table.
        { stdio: ['ignore', 2, 'inherit'] },
      );
      if (res.status !== 0) throw new Error(`peers.mjs --tiles ${k} failed (${res.status ?? res.signal})`);
      r = JSON.parse(fs.readFileSync(file, 'utf8'));
    } else {
      log(`peers: reusing ${path.relative(root, file)} of ${r.date}`);
    }
    const p = r.preparation;
    const s = r.servers ?? {};
    const row = (label, prep, server) => ({
      engine: label,
      build_wall_s: prep?.seconds ?? null,
      build_peak_rss_bytes: prep?.peak_memory_bytes ?? null,
      output_bytes: prep?.output_bytes ?? null,
      build_steps: prep?.steps ?? null,
      build_cached: prep?.cached ?? false,
      server: server ?? null,
    });
    return {
      k,
      file: path.relative(root, file),
      reused,
      date: r.date,
      quick: r.quick,
      commit: r.machine?.commit,
      rows: [
        row('Quietway (server, peers run)', p.quietway, s.quietway),
        row('OSRM CH (osrm-routed)', p.osrm_ch, s.osrm),
        row('OSRM MLD (osrm-routed --algorithm MLD)', p.osrm_mld, s.osrm_mld),
        row('Valhalla (valhalla_service)', p.valhalla, s.valhalla),
      ],
    };
  }

  // ---- Growth: how each cost grows with the junctions, between the smallest and largest k.

  const COSTS = [
    ['build wall (s)', (r) => r.build.wall_s, 'time'],
    ['build peak memory', (r) => r.build.peak_rss_bytes, 'bytes'],
    ['graph file', (r) => r.file_bytes, 'bytes'],
    ['load (s)', (r) => r.engine.load_s, 'time'],
    ['a metric’s first use (s)', (r) => r.engine.metric_first_use_s, 'time'],
    ['every base metric pruned (s)', (r) => r.engine.prune_all_base_metrics_s, 'time'],
    ['engine memory once loaded', (r) => r.engine.memory_engine_bytes, 'bytes'],
    ['engine memory, every metric built and pruned', (r) => r.engine.memory_engine_all_pruned_bytes, 'bytes'],
    ['resident memory once loaded', (r) => r.engine.rss_loaded_bytes, 'bytes'],
    ['resident memory, every metric built and pruned', (r) => r.engine.rss_all_pruned_bytes, 'bytes'],
    ['resident memory, peak', (r) => r.engine.rss_peak_bytes, 'bytes'],
    ['query with path, median (µs)', (r) => r.engine.query_with_path?.median_us, 'time'],
    [
      'query with path before pruning, median (µs)',
      (r) => r.engine.query_with_path_unpruned?.median_us,
      'time',
    ],
    ['directions, median (µs)', (r) => r.engine.directions?.median_us, 'time'],
    ['full customization, median (µs)', (r) => r.engine.full_customization?.median_us, 'time'],
    ['100 arcs live, median (µs)', (r) => r.engine.update_arcs_100_all_cycling_metrics?.median_us, 'time'],
    ['one avoidance live, median (µs)', (r) => r.engine.avoidance_added_and_live?.median_us, 'time'],
  ];
  const growth = [];
  if (runs.length > 1) {
    const a = runs[0];
    const z = runs[runs.length - 1];
    for (const [name, f, kind] of COSTS) {
      const [ya, yz] = [f(a), f(z)];
      // A figure scale-bench does not give (an older or newer build of it) is left out.
      if ((ya ?? null) === null && (yz ?? null) === null) continue;
      const ok = ya > 0 && yz > 0;
      growth.push({
        cost: name,
        from_k: a.k,
        to_k: z.k,
        junctions_ratio: junctions(z) / junctions(a),
        ratio: ok ? yz / ya : null,
        exponent: ok ? Math.log(yz / ya) / Math.log(junctions(z) / junctions(a)) : null,
        bytes_per_junction:
          kind === 'bytes' ? runs.map((r) => ({ k: r.k, value: f(r) / junctions(r) })) : null,
      });
    }
  }

  // ---- Results.

  return {
    name: 'scale',
    quick,
    date: started.toISOString(),
    seconds: (Date.now() - started.getTime()) / 1000,
    machine: {
      ...machine(),
      memory_bytes: os.totalmem(),
      load_average_at_end: os.loadavg(),
      node: process.version,
      // Files with uncommitted changes in the tree when measured (other work in the same checkout).
      worktree_changes: (gitOut('git status --porcelain --untracked-files=no') ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3)),
    },
    what: `k × k tilings of ${path.basename(sample)}: copies of the sample side by side, joined at the seams by short streets; not a real city`,
    sample: { file: path.basename(sample), bytes: fs.statSync(sample).size },
    tile_py: {
      path: 'bench/scale/tile.py',
      blob: gitOut('git hash-object bench/scale/tile.py'),
      python: pythonVersion,
      osmium: osmiumVersion,
    },
    tiles,
    runs,
    growth,
    peers,
  };
}

function mb(x) {
  return x === null || x === undefined ? '–' : (x / 1e6).toFixed(0);
}
function fixed(x, d = 1) {
  return x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d);
}
function int(x) {
  return x === null || x === undefined ? '–' : Math.round(x).toLocaleString('en-US');
}

/** A memory part's name without its metric count ("7 metrics: weights" → "metrics: weights"). */
function partName(p) {
  return p.replace(/^\d+ metrics: /, 'metrics: ');
}
/** A run's memory by part (bytes by part name), from scale-bench's breakdown `key`. */
function partsOf(x, key) {
  const out = new Map();
  for (const p of x.engine[key] ?? []) out.set(partName(p.part), (out.get(partName(p.part)) ?? 0) + p.bytes);
  return out;
}
/** How many metrics a breakdown counts ("7 metrics: …"), or null. */
function metricsIn(x, key) {
  for (const p of x.engine[key] ?? []) {
    const m = /^(\d+) metrics: /.exec(p.part);
    if (m) return Number(m[1]);
  }
  return null;
}

function markdown(r) {
  const lines = [];
  const changed = r.machine.worktree_changes ?? [];
  const nChanged = Array.isArray(changed) ? changed.length : changed;
  const both = (a, b) => (b === null || b === undefined ? a : `${a} / ${b}`);
  lines.push(
    `**City scale: ${r.what}.** Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${(r.machine.memory_bytes / 2 ** 30).toFixed(0)} GiB; commit ${r.machine.commit}${nChanged ? ` (+${nChanged} files with uncommitted changes, listed in the JSON)` : ''}; ${r.date.slice(0, 16)} UTC; tile.py with Python ${r.tile_py.python}, pyosmium ${r.tile_py.osmium}${r.quick ? '; --quick' : ''}.`,
    '',
    '| k | engine | junctions | OSM nodes | seam streets | build wall (s) | build peak (MB) | file (MB) | load (s) | engine memory (MB) | RSS (MB) | query with path p50 / p99 (µs) | directions p50 / p99 (ms) | full customization (ms) | 100 arcs live (ms) | one avoidance live (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  const ms = (x) => (x === null || x === undefined ? '–' : (x / 1000).toFixed(2));
  for (const x of r.runs) {
    const e = x.engine;
    lines.push(
      `| ${x.k} | Quietway (scale-bench) | ${int(junctions(x))} | ${int(x.tile.nodes)} | ${x.tile.seam_ways} | ${fixed(x.build.wall_s)} | ${mb(x.build.peak_rss_bytes)} | ${fixed(x.file_bytes / 1e6)} | ${fixed(e.load_s, 2)} | ${both(mb(e.memory_engine_bytes), e.memory_engine_all_pruned_bytes === undefined ? null : mb(e.memory_engine_all_pruned_bytes))} | ${[
        e.rss_loaded_bytes,
        e.rss_all_pruned_bytes,
        e.rss_peak_bytes,
      ]
        .filter((b) => b !== undefined)
        .map(mb)
        .join(
          ' / ',
        )} | ${fixed(e.query_with_path?.median_us)} / ${fixed(e.query_with_path?.p99_us)} | ${ms(e.directions?.median_us)} / ${ms(e.directions?.p99_us)} | ${ms(e.full_customization?.median_us)} | ${ms(e.update_arcs_100_all_cycling_metrics?.median_us)} | ${ms(e.avoidance_added_and_live?.median_us)} |`,
    );
  }
  if (r.peers) {
    const last = r.runs[r.runs.length - 1];
    for (const p of r.peers.rows) {
      const s = p.server;
      lines.push(
        `| ${r.peers.k} | ${p.engine} | – | ${int(last?.tile.nodes)} | ${last?.tile.seam_ways ?? '–'} | ${fixed(p.build_wall_s)}${p.build_cached ? ' (cached)' : ''} | ${mb(p.build_peak_rss_bytes)} | ${fixed((p.output_bytes ?? Number.NaN) / 1e6)} | ${s ? `${fixed(s.startup_s, 2)} (start-up)` : '–'} | – | ${s ? `${mb(s.rss_after_startup_bytes)} → ${mb(s.rss_after_serving_bytes)} (served)` : '–'} | – | – | – | – | – |`,
      );
    }
  }
  const e0 = r.runs[0].engine;
  lines.push(
    '',
    `Quietway rows: the build is \`quietway-build-graph\` (graph and place index) under \`/usr/bin/time\`; the rest is \`scale-bench\` on the graph file in one process: load until the graph routes${e0.memory_engine_all_pruned_bytes !== undefined ? '; engine memory once loaded / with every metric built and pruned; RSS once loaded / with every metric built and pruned / peak over the whole bench' : '; RSS once loaded / peak over the whole bench'} (its customizations and updates included).`,
  );
  if (r.peers) {
    lines.push(
      `Server rows (from ${r.peers.file}, ${r.peers.reused ? 'reused' : 'run now'}${r.peers.quick ? ', --quick' : ''}, commit ${r.peers.commit}, ${r.peers.date?.slice(0, 16)} UTC): build wall and peak memory of each engine's own preparation (Quietway there: its graph without the place index); file is the data written; "load" is the server's start-up, spawn to first successful route, each server started alone; RSS is the server's VmRSS after that first route → after serving the benchmark's trips. OSRM MLD shares osrm-extract with CH; its server is not started.`,
    );
  }
  // Load by phase and a metric's first use, where scale-bench reports them.
  const phases = [];
  for (const x of r.runs)
    for (const p of x.engine.load_phases ?? []) if (!phases.includes(p.phase)) phases.push(p.phase);
  if (phases.length) {
    const sec = (x, ph) => x.engine.load_phases?.find((p) => p.phase === ph)?.seconds;
    lines.push(
      '',
      '**Load by phase and first use** (s; a metric is customized and pruned when first used)',
      '',
      `| k | ${phases.map((ph) => ph.trim()).join(' | ')} | load | walking's metric, after the load | a metric's first use | one metric pruned | every base metric pruned | query with path before pruning p50 / p99 (µs) |`,
      `|---|${phases.map(() => '---').join('|')}|---|---|---|---|---|---|`,
    );
    for (const x of r.runs) {
      const e = x.engine;
      lines.push(
        `| ${x.k} | ${phases.map((ph) => fixed(sec(x, ph), 2)).join(' | ')} | ${fixed(e.load_s, 2)} | ${fixed(e.walking_metric_after_load_s, 2)} | ${fixed(e.metric_first_use_s, 2)} | ${fixed(e.prune_one_metric_s, 2)} | ${fixed(e.prune_all_base_metrics_s, 2)} | ${fixed(e.query_with_path_unpruned?.median_us)} / ${fixed(e.query_with_path_unpruned?.p99_us)} |`,
      );
    }
  }
  // Memory by part: once loaded and, where reported, with every metric built and pruned.
  const last = r.runs[r.runs.length - 1];
  const keys = [['memory_breakdown', 'loaded']];
  if (r.runs.some((x) => x.engine.memory_breakdown_all_pruned))
    keys.push(['memory_breakdown_all_pruned', 'all built']);
  const cols = r.runs.flatMap((x) => keys.map(([key, label]) => ({ x, key, label })));
  const parts = [];
  for (const c of cols)
    for (const part of partsOf(c.x, c.key).keys()) if (!parts.includes(part)) parts.push(part);
  const [lastKey] = keys[keys.length - 1];
  const colLabel = (c) => {
    const n = metricsIn(c.x, c.key);
    return `k=${c.x.k}${keys.length > 1 ? ` ${c.label}` : ''}${n ? ` (${n} metrics)` : ''}`;
  };
  lines.push(
    '',
    `**Engine memory by part** (MB; bytes per junction at k=${last.k}${keys.length > 1 ? ', every metric built' : ''})`,
    '',
    `| part | ${cols.map(colLabel).join(' | ')} | B/junction |`,
    `|---|${cols.map(() => '---').join('|')}|---|`,
  );
  for (const part of parts) {
    const lastBytes = partsOf(last, lastKey).get(part);
    lines.push(
      `| ${part} | ${cols.map((c) => fixed((partsOf(c.x, c.key).get(part) ?? Number.NaN) / 1e6)).join(' | ')} | ${lastBytes === undefined ? '–' : fixed(lastBytes / junctions(last), 0)} |`,
    );
  }
  const total = (c) => [...partsOf(c.x, c.key).values()].reduce((a, b) => a + b, 0);
  const lastTotal = [...partsOf(last, lastKey).values()].reduce((a, b) => a + b, 0);
  lines.push(
    `| **total** | ${cols.map((c) => fixed(total(c) / 1e6)).join(' | ')} | ${fixed(lastTotal / junctions(last), 0)} |`,
  );
  if (r.growth.length) {
    const g0 = r.growth[0];
    lines.push(
      '',
      `**Growth** from k=${g0.from_k} to k=${g0.to_k} (${fixed(g0.junctions_ratio, 2)}× the junctions): each cost's ratio, and the exponent b of cost ∝ junctions^b between those two sizes (1: in proportion to the junctions)`,
      '',
    );
    for (const g of r.growth) {
      const per = g.bytes_per_junction
        ? `; bytes per junction ${g.bytes_per_junction.map((b) => `${int(b.value)} (k=${b.k})`).join(', ')}`
        : '';
      lines.push(`- ${g.cost}: ×${fixed(g.ratio, 2)}, exponent ${fixed(g.exponent, 2)}${per}`);
    }
  }
  lines.push(
    '',
    `These are ${r.tiles.map((k) => `${k}×${k}`).join(', ')} tilings of ${r.sample.file}, not a real city: the sample's streets, tags and density repeated and joined by a few seam streets. A real city of the same size has its own mix of roads and its own trip lengths, and may cost more or less.`,
  );
  return lines.join('\n');
}

/** Cost against junctions, log-log: engine memory (MB), load (s), build (s), query with path (µs). */
function svg(r) {
  const series = [
    [
      'engine memory, all metrics (MB)',
      '#1b7f3b',
      (x) => (x.engine.memory_engine_all_pruned_bytes ?? x.engine.memory_engine_bytes) / 1e6,
    ],
    ['RSS once loaded (MB)', '#7fbf7b', (x) => x.engine.rss_loaded_bytes / 1e6],
    ['build wall (s)', '#c0392b', (x) => x.build.wall_s],
    ['load (s)', '#e67e22', (x) => x.engine.load_s],
    ['query with path p50 (µs)', '#1f5fbf', (x) => x.engine.query_with_path?.median_us],
  ].map(([name, color, f]) => ({
    name,
    color,
    points: r.runs.map((x) => [junctions(x), f(x)]).filter(([, y]) => y > 0),
  }));
  const xs = r.runs.map(junctions);
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const x0 = 10 ** Math.floor(Math.log10(Math.min(...xs)));
  const x1 = 10 ** Math.ceil(Math.log10(Math.max(...xs) * 1.01));
  const y0 = 10 ** Math.floor(Math.log10(Math.min(...ys)));
  const y1 = 10 ** Math.ceil(Math.log10(Math.max(...ys) * 1.01));
  // Room on the right for the series' labels.
  const right = W - M.right - 190;
  const x = scale(x0, x1, M.left, right, true);
  const y = scale(y0, y1, H - M.bottom, M.top, true);
  let body = '';
  for (let d = x0; d <= x1; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v > x1) break;
      body += `<line x1="${x(v)}" y1="${M.top}" x2="${x(v)}" y2="${H - M.bottom}" stroke="#ddd"/><text x="${x(v)}" y="${H - M.bottom + 16}" text-anchor="middle">${v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : v}</text>\n`;
    }
  }
  for (let d = y0; d <= y1; d *= 10) {
    body += `<line x1="${M.left}" y1="${y(d)}" x2="${right}" y2="${y(d)}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(d) + 4}" text-anchor="end">${d}</text>\n`;
  }
  // A guide of slope 1 (a cost in proportion to the junctions) in the top left corner.
  const [gx0, gx1, gy0] = [x0 * 1.3, x0 * 3.9, y1 / 8];
  body += `<line x1="${x(gx0)}" y1="${y(gy0)}" x2="${x(gx1)}" y2="${y((gy0 * gx1) / gx0)}" stroke="#777" stroke-dasharray="4 4"/><text x="${x(gx1) + 6}" y="${y((gy0 * gx1) / gx0) + 4}" fill="#777">slope 1: in proportion</text>\n`;
  // Each series' label beside its last point, pushed down where two would overlap.
  const labels = [];
  for (const s of series) {
    if (!s.points.length) continue;
    const pts = s.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
    body += `<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"/>\n`;
    body += s.points.map(([a, b]) => `<circle cx="${x(a)}" cy="${y(b)}" r="3" fill="${s.color}"/>`).join('');
    const [la, lb] = s.points[s.points.length - 1];
    labels.push({
      x: x(la) + 8,
      y: y(lb) + 4,
      color: s.color,
      text: `${s.name}: ${lb >= 100 ? lb.toFixed(0) : lb.toFixed(1)}`,
    });
  }
  labels.sort((a, b) => a.y - b.y);
  labels.forEach((l, i) => {
    if (i > 0) l.y = Math.max(l.y, labels[i - 1].y + 14);
    body += `<text x="${l.x}" y="${l.y}" fill="${l.color}">${esc(l.text)}</text>\n`;
  });
  body += `<text x="${right - 6}" y="${H - M.bottom - 8}" text-anchor="end" fill="#555">${esc(`k × k tilings of the sample (k = ${r.tiles.join(', ')}), not a real city`)}</text>\n`;
  return frame(
    'Quietway at city scale: cost against junctions',
    'junctions (log scale)',
    'cost (log scale; units per series)',
    body,
  );
}
