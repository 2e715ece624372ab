#!/usr/bin/env bash
# One command runs the whole suite: environment, services, lint, types, then pytest against the
# real Elasticsearch, PostgreSQL and Redis. Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/bootstrap.sh
bash scripts/services.sh up
bash scripts/browser.sh
eval "$(bash scripts/services.sh env)"
. scripts/secret.sh
.venv/bin/ruff check app indexer tests scripts
.venv/bin/ruff format --check app indexer tests scripts
.venv/bin/mypy
# The suite runs under coverage (subprocesses included); the report per package and its floor
# follow. COVERAGE=0 runs pytest alone.
if [ "${COVERAGE:-1}" = 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
rm -rf .state/coverage && mkdir -p .state/coverage
status=0
.venv/bin/coverage run -m pytest "$@" || status=$?
.venv/bin/coverage combine -q
if ! .venv/bin/python scripts/coverage_report.py && [ "$status" = 0 ]; then
  status=1
fi
exit "$status"
