#!/usr/bin/env bash
# Python side of a fresh machine: uv (from PyPI) and the locked environment in .venv.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export UV_PYTHON_DOWNLOADS=never
if ! command -v uv >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
uv sync --frozen --quiet
