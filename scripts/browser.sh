#!/usr/bin/env bash
# What the browser tests need on a fresh machine, installed once: Debian's Chromium (driven by
# Playwright for Python, from the locked environment) and axe-core from npm, at the version of
# tests/browser/package-lock.json.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
log() { echo "browser: $*" >&2; }
if ! command -v chromium >/dev/null 2>&1; then
  log "apt-get install chromium"
  if [ "$(id -u)" != 0 ]; then echo "browser: not root; cannot install chromium" >&2; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    fonts-dejavu-core >/dev/null
fi
if [ ! -f tests/browser/node_modules/axe-core/axe.min.js ]; then
  command -v npm >/dev/null 2>&1 || { echo "browser: npm is needed for axe-core" >&2; exit 1; }
  log "npm ci (axe-core)"
  (cd tests/browser && npm ci --no-audit --no-fund --silent)
fi
