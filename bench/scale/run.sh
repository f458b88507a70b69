#!/usr/bin/env bash
# `npm run bench:scale [-- --tiles 1,2,4] [-- --quick] [-- --peers] [-- --sample FILE]`: the engine at
# city scale, on k × k tilings of the sample extract (bench/scale/tile.py, run with the peers'
# pyosmium). Sets up the peers' virtual environment as bench:peers does (bench/peers/venv.sh),
# builds the graph pipeline and scale-bench, then runs bench/scale/scale.mjs. Without a Python ≥ 3.12
# with venv and pip it says so and skips (exit 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/peers/venv.sh

if ! peers_venv; then
  echo "bench:scale skipped: $venv_problem" >&2
  echo "  (tile.py needs pyosmium from the Python package registry: a Python ≥ 3.12 with venv and pip;" >&2
  echo "   set QUIETWAY_PEERS_PYTHON to its path)" >&2
  exit 0
fi

cargo build --release -q -p quietway-bench -p quietway-graph-pipeline
# --peers starts the Quietway server (server/dist) beside OSRM and Valhalla.
for a in "$@"; do [ "$a" = "--peers" ] && { [ -f server/dist/cli.js ] || npm run -s build:ts; }; done
node bench/scale/scale.mjs --venv "$venv" "$@"
