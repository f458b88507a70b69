#!/usr/bin/env bash
# `npm run bench:peers [-- --quick] [-- --reuse-peer-data] [-- --tiles K]`: Quietway side by side
# with OSRM and Valhalla (issue 25). Sets up bench/peers/.venv (bench/peers/venv.sh: ignored by git,
# the wheels pinned in bench/peers/requirements.txt), then runs bench/peers/peers.mjs and the gate
# (not for --tiles K, the sample tiled K × K). Without a Python ≥ 3.12 with venv and pip (the wheels
# are cp312-abi3) it says so and skips (exit 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/peers/venv.sh

skip() {
  echo "bench:peers skipped: $1" >&2
  echo "  (the peers install from the Python package registry: a Python ≥ 3.12 with venv and pip is needed;" >&2
  echo "   set QUIETWAY_PEERS_PYTHON to its path)" >&2
  exit 0
}

peers_venv || skip "$venv_problem"

[ -x target/release/quietway-build-graph ] || { echo "bench:peers: target/release/quietway-build-graph missing; run npm run build" >&2; exit 2; }
[ -f server/dist/cli.js ] || npm run -s build:ts

status=0
node bench/peers/peers.mjs --venv "$venv" "$@" || status=$?
[ "$status" -eq 0 ] || exit "$status"
# The gate's thresholds are set on the sample; a tiled run (--tiles K) reports its ratios and the
# issue's goals in bench/out/peers-tilesK.md without gating them.
for a in "$@"; do
  if [ "$a" = "--tiles" ]; then
    echo "peers gate skipped: --tiles runs are not gated (the gate's thresholds are set on the sample)" >&2
    exit 0
  fi
done
node bench/peers/gate.mjs || status=$?
exit "$status"
