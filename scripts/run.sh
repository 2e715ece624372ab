#!/usr/bin/env bash
# One command on a fresh machine: install and start the services, apply the database
# migrations, load the bundled sample release (fixtures/sample), make an administrator API
# key (revoking the one a previous run made; printed on a terminal, else written to
# .state/admin-key, see scripts/admin_key.sh) and serve the API on http://127.0.0.1:8000 beside
# a job-queue worker (webhook deliveries, release checks) until interrupted. When either stops,
# the other is stopped too.
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
bash scripts/admin_key.sh
# Without an SMTP server of the operator's, sign-in codes of the dashboard (/painel) and of the
# token bootstrap are written to .state/mail/ instead of being sent.
if [ -z "${SMTP_HOST:-}" ] && [ -z "${MAIL_DIR:-}" ]; then
  export MAIL_DIR="$ROOT/.state/mail"
  echo "e-mails (sign-in codes) are written to $MAIL_DIR" >&2
fi
.venv/bin/registry-worker &
worker=$!
.venv/bin/registry-api --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-2}" &
api=$!
trap 'kill -TERM "$api" "$worker" 2>/dev/null || true' INT TERM
status=0
wait -n "$api" "$worker" || status=$?
kill -TERM "$api" "$worker" 2>/dev/null || true
wait "$api" "$worker" 2>/dev/null || true
exit "$status"
