from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from export_openapi import OUTPUT, render  # noqa: E402


def test_openapi_committed_document_matches_app() -> None:
    assert OUTPUT.read_text(encoding="utf-8") == render(), "run scripts/export_openapi.py"


def test_openapi_served_by_app(api: httpx.Client) -> None:
    served = api.get("/schema/openapi.json").json()
    assert served == json.loads(OUTPUT.read_text(encoding="utf-8"))
    assert {"/v1/cnpj/{cnpj}", "/cnpj/{cnpj}", "/v1/status", "/health"} <= set(served["paths"])
