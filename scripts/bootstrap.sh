#!/usr/bin/env bash
# Python side of a fresh machine: uv (from PyPI) and the locked environment in .venv.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export UV_PYTHON_DOWNLOADS=never
if ! command -v uv >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
# Bytecode compiled once here: the indexer's worker processes and the app's workers import
# without compiling, even where the environment forbids writing bytecode.
uv sync --frozen --quiet --compile-bytecode
.venv/bin/python -m compileall -q app indexer scripts >/dev/null
