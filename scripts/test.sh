#!/usr/bin/env bash
# The test command (`npm test`): every Rust and TypeScript test. Builds what the tests load first;
# the builds are incremental, so this is quick after `npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent build:native

echo "== Rust: cargo test --workspace"
cargo test --workspace 2>&1

echo "== TypeScript: vitest"
npx vitest run
