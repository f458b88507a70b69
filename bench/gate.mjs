// Regression gate for benchmark CI: compares the ratios in bench/results/*.json with a committed
// baseline and exits 1 when one got worse by more than the threshold. Only ratios of like with like
// measured in the same run count (Quietway's query with path / fast_paths' on the same graph and
// pairs, each pair's two queries back to back), so a slower or noisier machine does not trip the
// gate; absolute figures are shown. The engine repeats these measurements in rounds over the same
// pairs and each ratio takes each engine's best round, so a slow spell of a shared machine during
// one pass does not read as a regression. The safety and route-quality figures
// (bench/results/safety.json, route-quality.json) are the same on any machine and are held to the
// goals themselves, route quality's with the pushing goals (SuperSafe's pushed share, its trips
// pushing over 30 %, its duration against Direct's).
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
    // On the NYC extract the reference is fast_paths' CH on the same graph, weights and pairs
    // (like for like). The plain Dijkstra's ratio is not gated: measured in the same run it still
    // swung by a factor of two with the machine's load (README, Performance).
    if (engine.nyc.ratio_best_quietway_to_fast_paths !== undefined) {
      out['engine: nyc query with path / fast_paths'] = engine.nyc.ratio_best_quietway_to_fast_paths;
    }
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
let regressed = 0;
let missed = 0;
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
  if (bad) regressed++;
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
    if (!e.goal_met) missed++;
    console.log(
      `| ${e.extract} | ${(e.fewer_busy_m * 100).toFixed(1)} % (≥ ${safety.goal.min_fewer_busy_m * 100} %) | ${(e.extra_length_median * 100).toFixed(1)} % (≤ ${safety.goal.max_extra_length_median * 100} %) | ${e.trips_with_noticeably_more_busy.length} (over ${safety.goal.noticeable_m} m) | ${e.goal_met ? 'ok' : 'GOAL MISSED'} |`,
    );
  }
}
// Route quality (bench/results/route-quality.json), like safety, does not depend on the machine.
const quality = read('route-quality');
if (quality) {
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  const mark = (e, k, text) => (e.checks[k] ? text : `**${text}**`);
  console.log('');
  console.log(
    '| route quality (issue 14) | SuperSafe / Direct median, p90, worst | busy avoided | U-turn steps | turns onto the same road | steps < 15 m | verdict |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const e of quality.extracts) {
    if (!e.goal_met) missed++;
    const r = e.supersafe_to_direct;
    const g = e.goal;
    console.log(
      `| ${e.extract} | ${mark(e, 'supersafe_to_direct_median', r.median.toFixed(2))}, ${mark(e, 'supersafe_to_direct_p90', r.p90.toFixed(2))}, ${mark(e, 'supersafe_to_direct_worst', r.worst.toFixed(2))} (≤ ${g.supersafe_to_direct_median}, ${g.supersafe_to_direct_p90}, ${g.supersafe_to_direct_worst}) | ${mark(e, 'busy_avoided', pct(e.busy_avoided))} (≥ ${g.busy_avoided * 100} %) | ${mark(e, 'uturn_steps', String(e.steps.uturn_steps))} (≤ ${g.uturn_steps}) | ${mark(e, 'turn_onto_same_road_share', pct(e.steps.turn_onto_same_road_share))} (≤ ${g.turn_onto_same_road_share * 100} %) | ${mark(e, 'short_step_share', pct(e.steps.short_step_share))} (≤ ${g.short_step_share * 100} %) | ${e.goal_met ? 'ok' : 'GOAL MISSED'} |`,
    );
  }
}
// Pushing (the bike walked) and SuperSafe's duration against Direct's, on route-quality's trips (held
// to the goals there: part of each city's route-quality verdict above); safety-bench's trips shown too.
const pushRows = [
  ['route-quality', quality],
  ['safety', safety],
].flatMap(([bench, r]) => (r ? r.extracts.filter((e) => e.pushing).map((e) => [bench, e]) : []));
if (pushRows.length) {
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  console.log('');
  console.log(
    '| pushing (bench: extract) | Direct pushed | SuperSafe pushed (goal) | SuperSafe trips pushing > 30 % (Direct too) | duration SuperSafe / Direct median, p90, worst (goal median) | busy cut over ridden metres | verdict |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [bench, e] of pushRows) {
    const p = e.pushing;
    const ok = Object.values(p.checks).every(Boolean);
    const mark = (k, text) => (p.checks[k] ? text : `**${text}**`);
    console.log(
      `| ${bench}: ${e.extract} | ${pct(p.direct.pushed_share)} | ${mark('pushed_share_supersafe', pct(p.supersafe.pushed_share))} (≤ ${pct(p.goal.max_pushed_share_supersafe)}) | ${mark('heavy_push_trips', `${p.heavy_push_trips} (${pct(p.heavy_push_trip_share)})`)} (${p.heavy_push_trips_direct_too}) (≤ ${pct(p.goal.max_heavy_push_trip_share)}) | ${mark('duration_ratio_median', p.duration_ratio.median.toFixed(2))}, ${p.duration_ratio.p90.toFixed(2)}, ${p.duration_ratio.worst.toFixed(2)} (≤ ${p.goal.max_duration_ratio_median}) | ${pct(p.busy_cut_over_ridden)} | ${bench === 'safety' ? `${ok ? 'ok' : 'missed'} (not gated)` : ok ? 'ok' : 'GOAL MISSED'} |`,
    );
  }
}
for (const name of ['http', 'addon', 'graph-build']) {
  const r = read(name);
  if (r) console.log(`(${name}: absolute figures in bench/results/${name}.json, not gated)`);
}
if (regressed + missed > 0) {
  const why = [];
  if (regressed) why.push(`${regressed} ratio(s) regressed by more than ${Math.round(threshold * 100)} %`);
  if (missed) why.push(`${missed} city goal(s) missed (safety or route quality)`);
  console.error(`gate: ${why.join('; ')}`);
  process.exit(1);
}
console.log('gate: no regression, every goal met');
