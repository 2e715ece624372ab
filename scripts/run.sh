#!/usr/bin/env bash
# One command on a fresh machine: install and start the services, apply the database
# migrations, load the bundled sample release (fixtures/sample), print an administrator API
# key (revoking the one a previous run printed) and serve the API on http://127.0.0.1:8000
# until interrupted.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/bootstrap.sh
bash scripts/services.sh up
eval "$(bash scripts/services.sh env)"
. scripts/secret.sh
.venv/bin/registry-admin migrate
.venv/bin/indexer load "${SAMPLE:-fixtures/sample}"
.venv/bin/indexer drop --keep 2
API_KEY=$(.venv/bin/registry-admin create-admin-key --rotulo run.sh --replace)
printf '\nAPI key (admin@localhost, shown once):\n  %s\ntry: curl -H "Authorization: Bearer %s" http://127.0.0.1:%s/v1/me/chaves\n\n' \
  "$API_KEY" "$API_KEY" "${PORT:-8000}"
exec .venv/bin/uvicorn app.asgi:app --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-2}" --no-access-log
