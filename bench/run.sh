#!/usr/bin/env bash
# `npm run bench [-- --quick]`: every benchmark; each prints a table and writes bench/results/<name>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
for a in "$@"; do [ "$a" = "--quick" ] && quick="--quick"; done
shared="${QUIETWAY_SHARED_DATA_DIR:-../shared/data}"
mkdir -p bench/results

cargo build --release -q -p quietway-bench -p quietway-graph-pipeline

echo "== Graph build: nyc-manhattan-below-42nd.osm.pbf"
out=$(mktemp -d)
target/release/quietway-build-graph --city nyc --osm "$shared/osm/nyc-manhattan-below-42nd.osm.pbf" \
  --out "$out" --shared-data "$shared" --quiet --summary-json "$out/summary.json"
node -e '
const fs = require("fs");
const s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const os = require("os");
const { execSync } = require("child_process");
let commit = ""; try { commit = execSync("git rev-parse --short HEAD").toString().trim(); } catch {}
const result = { name: "graph-build", machine: { cpu: os.cpus()[0].model, cores: os.cpus().length, commit }, ...s };
fs.writeFileSync("bench/results/graph-build.json", JSON.stringify(result, null, 2));
console.log(`| extract | entities | entities/s | graph nodes | arcs | time (s) | peak memory (MB) |`);
console.log(`|---|---|---|---|---|---|---|`);
console.log(`| ${process.argv[2]} | ${s.entities} | ${Math.round(s.entities_per_second)} | ${s.graph_nodes} | ${s.graph_arcs} | ${s.seconds.toFixed(2)} | ${(s.peak_memory_bytes / 1e6).toFixed(0)} |`);
' "$out/summary.json" nyc-manhattan-below-42nd
rm -rf "$out"

echo
echo "== Engine: queries, customization, updates"
target/release/engine-bench $quick --shared-data "$shared" --out bench/results/engine.json

echo
echo "== Safety: SuperSafe against Direct on random trips"
target/release/safety-bench $quick --shared-data "$shared" --out bench/results/safety.json

echo
echo "== Route quality: SuperSafe's detours and the steps' cleanliness on random trips (issue 14)"
target/release/route-quality-bench $quick --shared-data "$shared" --out bench/results/route-quality.json

echo
echo "== HTTP: POST /directions/v2/ on loopback"
npm run -s build:ts
node bench/http.mjs $quick

echo
echo "== Multi-modal: POST /multi-modal/v2/ with the Citi Bike feed on loopback (issue 17)"
node bench/multimodal.mjs $quick

echo
echo "== Scale-out: one and two server processes sharing a data directory and a Redis"
if command -v redis-server >/dev/null; then
  node bench/scale-out.mjs $quick
else
  echo "skipped: needs redis-server (apt-get install redis-server)"
fi

echo
echo "== Addon: the engine through N-API"
node bench/addon.mjs $quick

echo
echo "== Place search: the local index, as riders type"
node bench/places.mjs $quick

echo
echo "== Regression gate (ratios to in-run baselines; safety and route-quality goals)"
node bench/gate.mjs || status=$?
exit "${status:-0}"
