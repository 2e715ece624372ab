"""`POST /v1/cnpj/lote`: a result per item, one bad item never fails the batch."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SERPRO
from tests.strategies import json_values


def test_batch_mixed_items_each_answered_in_order(api: httpx.Client) -> None:
    items = ["33.683.111/0002-80", "00000000000191", "123", 42, "123"]
    response = api.post("/v1/cnpj/lote", json=items)
    assert response.status_code == 200
    body = response.json()
    assert (body["total"], body["encontrados"]) == (5, 1)
    statuses = [(item["entrada"], item["status"]) for item in body["data"]]
    assert statuses == [
        ("33.683.111/0002-80", "encontrado"),
        ("00000000000191", "nao_encontrado"),
        ("123", "invalido"),
        (42, "invalido"),
        ("123", "invalido"),
    ]
    assert body["data"][0]["empresa"]["razao_social"].startswith("SERVICO FEDERAL")
    assert body["data"][2]["motivo"] == "tamanho"
    assert body["data"][3]["motivo"] == "tipo"


def test_batch_duplicate_cnpj_400_naming_positions(api: httpx.Client) -> None:
    items = [SERPRO, "00000000000191", "33.683.111/0002-80", "x"]
    response = api.post("/v1/cnpj/lote", json=items)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Bad Request"
    assert SERPRO in body["message"]
    assert body["details"]["duplicados"] == [{"cnpj": SERPRO, "posicoes": [0, 2]}]
    # refused before it is counted: the window is not charged for the four items
    assert response.headers.get("X-RateLimit-Cost") != str(len(items))


def test_batch_object_body_and_alias_path(api: httpx.Client) -> None:
    response = api.post("/cnpj/lote", json={"cnpjs": [SERPRO]})
    assert response.status_code == 200
    assert response.json()["data"][0]["status"] == "encontrado"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"not json", "JSON"),
        (b"{}", "cnpjs"),
        (b'{"cnpjs": [], "extra": 1}', "Campo desconhecido: extra"),
        (b'"33683111000280"', "lista"),
        (b"[]", "vazia"),
        (json.dumps([SERPRO] * 101).encode(), "100"),
    ],
)
def test_batch_bad_bodies_400(api: httpx.Client, content: bytes, fragment: str) -> None:
    response = api.post(
        "/v1/cnpj/lote", content=content, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Bad Request"
    assert fragment in body["message"] + json.dumps(body.get("details"))


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(json_values, max_size=120) | json_values)
def test_batch_any_json_never_500(api: httpx.Client, body: object) -> None:
    response = api.post("/v1/cnpj/lote", json=body)
    assert response.status_code in {200, 400}
    if response.status_code == 200:
        items = body["cnpjs"] if isinstance(body, dict) else body
        assert response.json()["total"] == len(items)  # type: ignore[arg-type]
