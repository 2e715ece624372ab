#!/usr/bin/env bash
# Makes the administrator key of this install (revoking the one this script made before) and
# hands it over without leaving it in a log: printed when stdout is a terminal; otherwise (a
# log file, CI, a service manager) written to a file only its owner can read, whose path is
# printed instead. ADMIN_EMAIL (admin@localhost.localdomain) and ADMIN_KEY_FILE (.state/admin-key) change
# the account and the file.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EMAIL=${ADMIN_EMAIL:-admin@localhost.localdomain}
KEY_FILE=${ADMIN_KEY_FILE:-$ROOT/.state/admin-key}
key=$("$ROOT/.venv/bin/registry-admin" create-admin-key --email "$EMAIL" --rotulo run.sh --replace)
if [ -t 1 ]; then
  printf '\nAPI key (%s, shown once):\n  %s\ntry: curl -H "Authorization: Bearer %s" http://127.0.0.1:%s/v1/me/chaves\n\n' \
    "$EMAIL" "$key" "$key" "${PORT:-8000}"
else
  mkdir -p "$(dirname "$KEY_FILE")"
  (umask 077 && printf '%s\n' "$key" >"$KEY_FILE.tmp")
  chmod 600 "$KEY_FILE.tmp"
  mv -f "$KEY_FILE.tmp" "$KEY_FILE"
  printf 'API key (%s) written to %s, readable by %s only; earlier keys of this script are revoked.\n' \
    "$EMAIL" "$KEY_FILE" "$(id -un)"
fi
