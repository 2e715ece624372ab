#!/usr/bin/env bash
# One command runs the whole suite: environment, services, lint, types, then pytest against the
# real Elasticsearch, PostgreSQL and Redis. Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/bootstrap.sh
bash scripts/services.sh up
eval "$(bash scripts/services.sh env)"
. scripts/secret.sh
.venv/bin/ruff check app indexer tests scripts
.venv/bin/ruff format --check app indexer tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
