"""Hypothesis over the search routes with values that mean something: valid filter values from
the sample's own data, combined, so examples reach Elasticsearch instead of stopping at a 400;
plus long and non-ASCII text, repeated parameters, JSON bodies, and Authorization headers of any
bytes. Every answer is a 200 whose hits honour the filters, or a 400 naming a field."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.codes import UFS
from tests.conftest import SAMPLE, Server

with (SAMPLE / "ESTABELE.csv").open(encoding="latin-1", newline="") as stream:
    _ROWS = [row for row in csv.reader(stream, delimiter=";") if len(row) == 30]
CNAES = sorted({row[11] for row in _ROWS if row[11]})
CEPS = sorted({row[18] for row in _ROWS if len(row[18]) == 8})
CITIES = sorted({row[20] for row in _ROWS if row[20]})
NAMES = sorted({word for row in _ROWS for word in row[4].split() if len(word) > 3})

texts = st.text(min_size=1, max_size=250) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=250
)
values: dict[str, st.SearchStrategy[Any]] = {
    "uf": st.lists(st.sampled_from(UFS), min_size=1, max_size=4).map(",".join),
    "cnae": st.sampled_from(CNAES).flatmap(
        lambda code: st.sampled_from([code, code[:2], code[:3], code[:5]])
    ),
    "cnae_secundario": st.booleans(),
    "municipio": st.sampled_from(CITIES),
    "cep": st.sampled_from(CEPS).flatmap(lambda cep: st.integers(1, 8).map(lambda n: cep[:n])),
    "situacao": st.sampled_from(["ativa", "baixada", "02", "08", "inapta,suspensa"]),
    "porte": st.sampled_from(["me", "epp", "demais", "01,03"]),
    "matriz": st.booleans(),
    "simples": st.booleans(),
    "mei": st.booleans(),
    "com_email": st.booleans(),
    "com_telefone": st.booleans(),
    "capital_min": st.integers(0, 10_000),
    "abertura_de": st.dates().map(str),
    "limit": st.integers(1, 100),
    "facets": st.sampled_from(["uf", "cnae", "uf,situacao", "municipio"]),
    "nome": st.sampled_from(NAMES) | texts,
}
filters = st.fixed_dictionaries({}, optional=values)


@pytest.fixture(scope="module")
def api(sample_server: Server) -> Iterator[httpx.Client]:
    with sample_server.client(timeout=30) as client:
        yield client


def _query(params: dict[str, Any]) -> dict[str, str]:
    return {
        name: str(value).lower() if isinstance(value, bool) else str(value)
        for name, value in params.items()
    }


def _check(response: httpx.Response, params: dict[str, Any]) -> None:
    assert response.status_code in (200, 400), response.text
    body = response.json()
    if response.status_code == 400:
        assert body["error"] == "Bad Request"
        assert body["message"]
        return
    for hit in body["data"]:
        if "uf" in params:
            assert hit["uf"] in params["uf"].split(",")
        if "cnae" in params and not params.get("cnae_secundario"):
            assert hit["cnae_principal"].startswith(params["cnae"])
        if "cep" in params:
            assert hit["cep"].startswith(params["cep"])
        if params.get("situacao") in ("ativa", "02"):
            assert hit["situacao_cadastral"] == "ATIVA"
    assert len(body["data"]) <= params.get("limit", 20)
    assert body["total"] >= len(body["data"])


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(params=filters)
def test_seek_valid_filter_combinations_hits_honour_them(
    api: httpx.Client, params: dict[str, Any]
) -> None:
    _check(api.get("/v1/seek", params=_query(params)), params)


@settings(max_examples=100)
@given(params=filters)
def test_seek_body_same_answer_as_query_string(api: httpx.Client, params: dict[str, Any]) -> None:
    body = {**params}
    by_body = api.post("/v1/seek", json=body)
    by_query = api.get("/v1/seek", params=_query(params))
    assert by_body.status_code == by_query.status_code
    if by_body.status_code == 200:
        assert by_body.json()["data"] == by_query.json()["data"]
        assert by_body.json()["total"] == by_query.json()["total"]


@settings(max_examples=100)
@given(
    q=texts,
    extra=st.fixed_dictionaries({}, optional={k: values[k] for k in ("uf", "situacao", "limit")}),
)
def test_search_any_text_with_filters_200_or_400(
    api: httpx.Client, q: str, extra: dict[str, Any]
) -> None:
    response = api.post("/v1/search", json={"q": q, **extra})
    _check(response, extra)
    if len(q) > 200:
        assert response.status_code == 400
        assert response.json()["details"]["campo"] == "q"


@settings(max_examples=60)
@given(
    name=st.sampled_from(["uf", "cnae", "q", "limit", "situacao"]),
    first=st.text(max_size=10),
    second=st.text(max_size=10),
)
def test_repeated_parameter_400_naming_it(
    api: httpx.Client, name: str, first: str, second: str
) -> None:
    response = api.get(
        "/v1/search",
        params=[(name, first), (name, second), ("q", "x")]
        if name != "q"
        else [("q", first), ("q", second)],
    )
    assert response.status_code == 400
    assert response.json()["details"]["campo"] == name


header_bytes = st.lists(
    st.integers(0x20, 0xFF).filter(lambda b: b != 0x7F), min_size=1, max_size=80
).map(bytes)
"""Printable ASCII and every byte above it (obs-text, as a non-UTF-8 client would send)."""


@settings(max_examples=100)
@given(raw=header_bytes)
def test_authorization_any_bytes_401(sample_server: Server, raw: bytes) -> None:
    """Non-ASCII bytes in Authorization (sent raw, not as UTF-8) are a 401, never a 500."""
    value = raw.strip(b" \t") or b"x"
    with httpx.Client(base_url=sample_server.url, timeout=10) as client:
        request = client.build_request("GET", "/v1/me/chaves")
        request.headers["Authorization"] = value.decode("latin-1")
        response = client.send(request)
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "Unauthorized"
