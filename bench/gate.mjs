// Regression gate for benchmark CI: compares the ratios in bench/results/*.json with a committed
// baseline and exits 1 when one got worse by more than the threshold. Only ratios to a baseline
// measured in the same run count (Quietway / fast_paths on the same pairs, CCH / Dijkstra on the
// same pairs), so a slower or noisier machine does not trip the gate; absolute figures are shown.
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
for (const name of ['http', 'addon', 'graph-build']) {
  const r = read(name);
  if (r) console.log(`(${name}: absolute figures in bench/results/${name}.json, not gated)`);
}
if (failed > 0) {
  console.error(`gate: ${failed} ratio(s) regressed by more than ${Math.round(threshold * 100)} %`);
  process.exit(1);
}
console.log('gate: no regression');
