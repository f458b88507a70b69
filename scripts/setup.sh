#!/usr/bin/env bash
# One command from a fresh clone to a running server on the embedded defaults:
# install (from the lockfile), build the native engine and the server, build any missing city
# graphs, then start serving. Re-running it is cheap: every step is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "Installing npm packages (npm ci)"
  npm ci
fi

step "Building the native engine, graph pipeline and server"
npm run build

if node server/dist/cli.js build-graph --help >/dev/null 2>&1; then
  step "Building city graphs that are missing"
  node server/dist/cli.js build-graph --defaults --missing-only
fi

step "Starting Quietway (Ctrl-C to stop)"
exec node server/dist/cli.js serve
