#!/usr/bin/env bash
# The test command (`npm test`): every Rust and TypeScript test, the TypeScript ones on both stores
# (the embedded SQLite file, then PostgreSQL). Builds what the tests load first; the builds are
# incremental, so this is quick after `npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent build:native

echo "== Rust: cargo test --workspace"
cargo test --workspace 2>&1

echo "== TypeScript: vitest (SQLite store)"
npx vitest run

# The same suite on PostgreSQL (Debian's, installed when missing; a throw-away cluster).
echo "== TypeScript: vitest (PostgreSQL store)"
QUIETWAY_TEST_STORE=postgres npx vitest run
