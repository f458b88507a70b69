// The peers gate (issue 25): ratios within one `npm run bench:peers` run, never absolute times. It
// fails when Quietway falls behind a peer on the ratios the issue names: its HTTP requests/s at 8
// connections under OSRM's (CH) or Valhalla's, its graph build slower than OSRM's extract + contract
// or Valhalla's tiles, SuperSafe's cut in bare major-road metres under Valhalla's at use_roads 0, or
// its detour, as extra metres ridden per such metre avoided, above that setting's. The p99 and the
// weight change are shown, not gated. The issue's goals (1.5×, 3×, 20×, …) are reported beside each.
//
//   node bench/peers/gate.mjs [--results bench/out/peers.json]
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const i = args.indexOf('--results');
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const file = i >= 0 && args[i + 1] ? path.resolve(args[i + 1]) : path.join(root, 'bench/out/peers.json');
if (!fs.existsSync(file)) {
  console.error(`peers gate: no results at ${file}; run \`npm run bench:peers\` first`);
  process.exit(2);
}
const r = JSON.parse(fs.readFileSync(file, 'utf8')).ratios;
// Each check: the ratio, oriented so that ≥ 1 means Quietway is not behind, the issue's goal, and
// whether the gate holds it.
const checks = [
  ['HTTP req/s at 8 connections, Quietway / OSRM', r.rps8_over_osrm, 1.5, true],
  ['HTTP req/s at 8 connections, Quietway / Valhalla', r.rps8_over_valhalla, 3, true],
  ['p99 at 8 connections, OSRM / Quietway', r.p99_8_osrm_over_quietway, 1, false],
  ['p99 at 8 connections, Valhalla / Quietway', r.p99_8_valhalla_over_quietway, 1, false],
  ['build wall, OSRM extract + contract / Quietway', r.build_speedup_over_osrm_ch, 20, true],
  ['build wall, Valhalla tiles / Quietway', r.build_speedup_over_valhalla, 3, true],
  ['weight change live, osrm-customize / Quietway', r.update_speedup_over_osrm_customize, 20, false],
  ['bare major-road cut, SuperSafe / Valhalla use_roads 0', r.supersafe_cut_over_valhalla_0, 3, true],
  [
    'extra metres per metre avoided, Valhalla use_roads 0 / SuperSafe',
    r.supersafe_extra_m_per_m_avoided > 0 && r.valhalla_0_extra_m_per_m_avoided !== null
      ? Math.max(r.valhalla_0_extra_m_per_m_avoided, 0) / r.supersafe_extra_m_per_m_avoided
      : null,
    null,
    true,
  ],
];
let behind = 0;
console.log('| ratio (≥ 1: Quietway not behind) | now | issue goal | gate |');
console.log('|---|---|---|---|');
for (const [name, value, goal, gated] of checks) {
  const ok = value !== null && value !== undefined && Number.isFinite(value) && value >= 1;
  if (!ok && gated) behind++;
  const goalText = goal === null ? '–' : `${goal}× (${value >= goal ? 'met' : 'missed'})`;
  console.log(
    `| ${name} | ${value === null ? '–' : value.toFixed(2)} | ${goalText} | ${gated ? (ok ? 'ok' : 'BEHIND') : `not gated (${ok ? 'not behind' : 'behind'})`} |`,
  );
}
if (behind) {
  console.error(`peers gate: Quietway falls behind on ${behind} ratio(s)`);
  process.exit(1);
}
console.log('peers gate: Quietway is not behind on any ratio');
