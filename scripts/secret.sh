# Sourced by run.sh and test.sh: exports API_KEY_SECRET, the server secret of the keyed hash of
# API keys. When it is not set, one is generated once into .state/api-key-secret (git-ignored,
# readable by its owner only) and reused, so keys stay valid across restarts.
# The project's folder is this script's parent, whatever the caller's ROOT or working directory.
if [ -z "${API_KEY_SECRET:-}" ]; then
  secret_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.state/api-key-secret"
  mkdir -p "$(dirname "$secret_file")"
  if [ ! -s "$secret_file" ]; then
    (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32))' >"$secret_file")
  fi
  API_KEY_SECRET=$(cat "$secret_file")
  export API_KEY_SECRET
  unset secret_file
fi
