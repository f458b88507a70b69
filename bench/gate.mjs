// Regression gate for benchmark CI: compares the ratios in bench/results/*.json with a committed
// baseline and exits 1 when one got worse by more than the threshold. Only ratios to a baseline
// measured in the same run count (Quietway / fast_paths on the same pairs, CCH / Dijkstra on the
// same pairs), so a slower or noisier machine does not trip the gate; absolute figures are shown.
// The safety figures (bench/results/safety.json) are the same on any machine and are held to the
// goal itself.
//
//   node bench/gate.mjs [--baseline bench/baseline.json] [--threshold 0.25] [--results bench/results]
//   node bench/gate.mjs --write-baseline      (record the current results as the baseline)
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const resultsDir = path.resolve(opt('--results', path.join(root, 'bench/results')));
const baselineFile = path.resolve(opt('--baseline', path.join(root, 'bench/baseline.json')));
const threshold = Number(opt('--threshold', '0.25'));

function read(name) {
  const f = path.join(resultsDir, `${name}.json`);
  return fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : null;
}

/** The gated ratios (lower is better), by name. */
function ratios() {
  const out = {};
  const engine = read('engine');
  if (engine) {
    for (const g of engine.fast_paths_maps) {
      out[`engine: ${g.graph} query with path / fast_paths`] = g.ratio_median_quietway_to_fast_paths;
    }
    const nyc = engine.nyc;
    out['engine: nyc query with path / Dijkstra'] = nyc.query_with_path.median_us / nyc.dijkstra.median_us;
    out['engine: nyc query distance / Dijkstra'] = nyc.query_distance.median_us / nyc.dijkstra.median_us;
  }
  return out;
}

const current = ratios();
if (Object.keys(current).length === 0) {
  console.error(`gate: no results in ${resultsDir}; run \`npm run bench\` first`);
  process.exit(2);
}
if (args.includes('--write-baseline')) {
  fs.writeFileSync(baselineFile, `${JSON.stringify({ threshold, ratios: current }, null, 2)}\n`);
  console.log(`baseline written to ${path.relative(root, baselineFile)}`);
  process.exit(0);
}
if (!fs.existsSync(baselineFile)) {
  console.error(`gate: no baseline at ${baselineFile}; record one with --write-baseline`);
  process.exit(2);
}
const baseline = JSON.parse(fs.readFileSync(baselineFile, 'utf8')).ratios;
let failed = 0;
console.log(
  `| ratio (lower is better) | baseline | now | change | verdict (threshold ${Math.round(threshold * 100)} %) |`,
);
console.log('|---|---|---|---|---|');
for (const [name, now] of Object.entries(current)) {
  const base = baseline[name];
  if (base === undefined) {
    console.log(`| ${name} | – | ${now.toFixed(4)} | – | new |`);
    continue;
  }
  const change = now / base - 1;
  const bad = change > threshold;
  if (bad) failed++;
  console.log(
    `| ${name} | ${base.toFixed(4)} | ${now.toFixed(4)} | ${(change * 100).toFixed(1)} % | ${bad ? 'REGRESSION' : 'ok'} |`,
  );
}
// The safety goal does not depend on the machine: it is checked against the goal itself.
const safety = read('safety');
if (safety) {
  console.log('');
  console.log(
    '| safety goal (SuperSafe against Direct) | fewer busy metres | median extra length | trips with more busy road | verdict |',
  );
  console.log('|---|---|---|---|---|');
  for (const e of safety.extracts) {
    if (!e.goal_met) failed++;
    console.log(
      `| ${e.extract} | ${(e.fewer_busy_m * 100).toFixed(1)} % (≥ ${safety.goal.min_fewer_busy_m * 100} %) | ${(e.extra_length_median * 100).toFixed(1)} % (≤ ${safety.goal.max_extra_length_median * 100} %) | ${e.trips_with_noticeably_more_busy.length} (over ${safety.goal.noticeable_m} m) | ${e.goal_met ? 'ok' : 'GOAL MISSED'} |`,
    );
  }
}
for (const name of ['http', 'addon', 'graph-build']) {
  const r = read(name);
  if (r) console.log(`(${name}: absolute figures in bench/results/${name}.json, not gated)`);
}
if (failed > 0) {
  console.error(
    `gate: ${failed} ratio(s) regressed by more than ${Math.round(threshold * 100)} %, or a city missed the safety goal`,
  );
  process.exit(1);
}
console.log('gate: no regression');
