#!/usr/bin/env bash
# One command on a fresh machine: install and start the services, load the bundled sample
# release (fixtures/sample) and serve the API on http://127.0.0.1:8000 until interrupted.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/bootstrap.sh
bash scripts/services.sh up
eval "$(bash scripts/services.sh env)"
.venv/bin/indexer load "${SAMPLE:-fixtures/sample}"
.venv/bin/indexer drop --keep 2
exec .venv/bin/uvicorn app.asgi:app --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-2}" --no-access-log
