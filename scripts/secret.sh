# Sourced by run.sh and test.sh: exports API_KEY_SECRET, the server secret of the keyed hash of
# API keys. When it is not set, one is generated once into .state/api-key-secret (git-ignored,
# readable by its owner only) and reused, so keys stay valid across restarts.
if [ -z "${API_KEY_SECRET:-}" ]; then
  mkdir -p "$ROOT/.state"
  if [ ! -s "$ROOT/.state/api-key-secret" ]; then
    (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32))' >"$ROOT/.state/api-key-secret")
  fi
  API_KEY_SECRET=$(cat "$ROOT/.state/api-key-secret")
  export API_KEY_SECRET
fi
