from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from stdnum.br import cnpj as stdnum_cnpj

from app.domain import cnpj

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import contract_formats  # noqa: E402
from export_openapi import OUTPUT, render  # noqa: E402


def test_openapi_committed_document_matches_app() -> None:
    assert OUTPUT.read_text(encoding="utf-8") == render(), "run scripts/export_openapi.py"


def test_openapi_served_by_app(api: httpx.Client) -> None:
    served = api.get("/schema/openapi.json").json()
    assert served == json.loads(OUTPUT.read_text(encoding="utf-8"))
    assert {"/v1/cnpj/{cnpj}", "/cnpj/{cnpj}", "/v1/status", "/health"} <= set(served["paths"])


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(OUTPUT.read_text(encoding="utf-8"))
    return document


def _body(path: str, method: str = "post") -> dict[str, Any]:
    body = _document()["paths"][path][method]["requestBody"]
    assert body["required"] is True
    schema: dict[str, Any] = body["content"]["application/json"]["schema"]
    return schema


def test_bodies_refuse_unknown_fields_as_the_routes_do() -> None:
    for path in ("/v1/me/chaves", "/v1/me/monitoramentos", "/v1/me/lotes", "/v1/search"):
        assert _body(path)["additionalProperties"] is False, path
    assert _body("/v1/me/monitoramentos/{monitor_id}", "patch")["additionalProperties"] is False


def test_raw_bodies_documented_with_the_fields_of_their_mode() -> None:
    search, seek = _body("/v1/search"), _body("/v1/seek")
    assert "q" in search["properties"]
    assert "nome" not in search["properties"]
    assert "nome" in seek["properties"]
    assert "q" not in seek["properties"]
    # "q or at least one filter": paging fields alone are not enough
    needed = {rule["required"][0] for rule in search["anyOf"]}
    assert "q" in needed
    assert "uf" in needed
    assert not needed & {"limit", "cursor", "facets"}
    batch = _body("/v1/cnpj/lote")["anyOf"]
    assert {option["type"] for option in batch} == {"array", "object"}
    assert batch[0]["maxItems"] == 100
    assert batch[0]["items"]["format"] == "cnpj"


def test_lots_document_both_confirmations_as_required_true() -> None:
    lot = _body("/v1/me/lotes")
    assert {"quantidade", "confirmar_lgpd", "uso_responsavel"} <= set(lot["required"])
    assert lot["properties"]["confirmar_lgpd"]["const"] is True
    assert {rule["required"][0] for rule in lot["anyOf"]} == {
        "objetivo", "segmento", "cnae", "cnae_grupo", "uf", "cidade"
    }  # fmt: skip


def test_checked_cnpj_paths_carry_the_format_and_the_validator_does_not() -> None:
    paths = _document()["paths"]
    for path in ("/v1/cnpj/{cnpj}", "/v1/cnpj/contato/{cnpj}", "/v1/sintegra/{cnpj}",
                 "/v1/socios/{cnpj}", "/v1/similares/{cnpj}"):  # fmt: skip
        (cnpj,) = [p for p in paths[path]["get"]["parameters"] if p["name"] == "cnpj"]
        assert cnpj["schema"]["format"] == "cnpj", path
        assert all(re.fullmatch(cnpj["schema"]["pattern"].strip("^$"), example)
                   for example in cnpj["schema"]["examples"])  # fmt: skip
    (free,) = paths["/v1/cnpj/validar/{cnpj}"]["get"]["parameters"]
    assert "format" not in free["schema"]  # the validator answers for any text


def test_required_query_parameters_of_each_mode() -> None:
    paths = _document()["paths"]
    required = {
        (path, p["name"])
        for path in ("/v1/nome", "/v1/seek/cidades", "/v1/search")
        for p in paths[path]["get"]["parameters"]
        if p.get("required")
    }
    assert required == {("/v1/nome", "nome"), ("/v1/seek/cidades", "municipio"),
                        ("/v1/seek/cidades", "categoria")}  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(contract_formats.cnpjs())
def test_generated_cnpjs_are_valid(value: str) -> None:
    """The contract's CNPJs, checked by python-stdnum where it knows them (numeric)."""
    plain = re.sub(r"[./-]", "", value)
    if plain.isdigit():
        assert stdnum_cnpj.is_valid(plain), value
    assert cnpj.is_valid(value), value
