#!/usr/bin/env bash
# `npm run bench:peers [-- --quick] [-- --reuse-peer-data]`: Quietway side by side with OSRM and
# Valhalla (issue 25). Sets up bench/peers/.venv (ignored by git) with the wheels pinned in
# bench/peers/requirements.txt, then runs bench/peers/peers.mjs and the gate. Without a Python
# ≥ 3.12 with venv and pip (the wheels are cp312-abi3) it says so and skips (exit 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=bench/peers/.venv
req=bench/peers/requirements.txt

skip() {
  echo "bench:peers skipped: $1" >&2
  echo "  (the peers install from the Python package registry: a Python ≥ 3.12 with venv and pip is needed;" >&2
  echo "   set QUIETWAY_PEERS_PYTHON to its path)" >&2
  exit 0
}

usable() { "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }

if [ ! -x "$venv/bin/python" ] || ! usable "$venv/bin/python"; then
  py=""
  candidates=("${QUIETWAY_PEERS_PYTHON:-}" python3.13 python3.12 python3)
  if command -v pyenv >/dev/null 2>&1; then
    for d in "$(pyenv root)"/versions/3.1[2-9]*; do [ -x "$d/bin/python3" ] && candidates+=("$d/bin/python3"); done
  fi
  for c in "${candidates[@]}"; do
    [ -n "$c" ] || continue
    p=$(command -v "$c" 2>/dev/null) || continue
    if usable "$p"; then py="$p"; break; fi
  done
  [ -n "$py" ] || skip "no Python ≥ 3.12 with venv and pip found"
  rm -rf "$venv"
  "$py" -m venv "$venv" || skip "$py could not create a virtual environment"
fi
# Installs (or confirms) the pinned wheels; binary wheels only, never a source build.
if ! cmp -s "$req" "$venv/.installed-requirements.txt" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --only-binary=:all: -r "$req" || skip "pip could not install $req"
  cp "$req" "$venv/.installed-requirements.txt"
fi

[ -x target/release/quietway-build-graph ] || { echo "bench:peers: target/release/quietway-build-graph missing; run npm run build" >&2; exit 2; }
[ -f server/dist/cli.js ] || npm run -s build:ts

status=0
node bench/peers/peers.mjs --venv "$venv" "$@" || status=$?
[ "$status" -eq 0 ] || exit "$status"
node bench/peers/gate.mjs || status=$?
exit "$status"
