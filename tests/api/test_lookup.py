"""`GET /v1/cnpj/{cnpj}` and `/v1/status` over HTTP, served by two uvicorn workers."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SERPRO, Server


def _assert_error(response: httpx.Response, status: int, error: str) -> dict[str, object]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, object] = response.json()
    assert body["error"] == error
    assert isinstance(body["message"], str)
    assert body["message"]
    return body


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/cnpj/{SERPRO}",
        f"/cnpj/{SERPRO}",
        "/v1/cnpj/33.683.111/0002-80",
        "/v1/cnpj/33.683.111%2F0002-80",
        "/cnpj/33.683.111/0002-80",
    ],
)
def test_lookup_serpro_any_spelling_full_record(api: httpx.Client, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 200
    record = response.json()
    assert record["cnpj"] == SERPRO
    assert record["razao_social"] == "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)"
    assert record["capital_social"] == 1061004829.23
    assert '"capital_social":1061004829.23,' in response.text
    assert record["endereco"]["municipio"] == {
        "codigo": "9701", "codigo_ibge": "5300108", "nome": "BRASILIA"
    }  # fmt: skip
    assert record["cnae_principal"]["grupo"]["secao"]["codigo"] == "J"
    assert len(record["cnaes_secundarios"]) == 5
    assert [s["nome"] for s in record["socios"]][:2] == [
        "ANDRE DE CESERO", "ANTONIO DE PADUA FERREIRA PASSOS"
    ]  # fmt: skip
    assert record["simples"] == {"optante": True, "data_opcao": "2014-01-01", "data_exclusao": None}
    assert "busca" not in record
    assert len(record["hash"]) == 32


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/v1/cnpj/abc", "tamanho"),
        ("/v1/cnpj/33683111000281", "segundo_digito"),
        ("/v1/cnpj/33683111000290", "primeiro_digito"),
        ("/v1/cnpj/12ABC34501DE34", "segundo_digito"),
        ("/v1/cnpj/12ABC34501DEXY", "caracteres"),
        ("/cnpj/%20", "vazio"),
    ],
)
def test_lookup_malformed_cnpj_400_with_reason(api: httpx.Client, path: str, reason: str) -> None:
    body = _assert_error(api.get(path), 400, "Bad Request")
    assert body["details"]["motivo"] == reason  # type: ignore[index]


@pytest.mark.parametrize("cnpj", ["00000000000191", "12ABC34501DE35", "12.ABC.345/01DE-35"])
def test_lookup_unknown_valid_cnpj_404(api: httpx.Client, cnpj: str) -> None:
    _assert_error(api.get(f"/v1/cnpj/{cnpj}"), 404, "Not Found")


def test_unknown_route_and_method_json_errors(api: httpx.Client) -> None:
    """No route, or a method the path does not take: the JSON error body, in the words of
    every other answer, naming the path (control characters shown as `?`)."""
    missing = _assert_error(api.get("/v1/nothing-here"), 404, "Not Found")
    assert missing["message"] == "Caminho não encontrado: /v1/nothing-here."
    _assert_error(api.get("/v1/cnpj/"), 404, "Not Found")
    odd = _assert_error(api.get("/v1/a%0Ab" + "c" * 300), 404, "Not Found")
    assert odd["message"] == f"Caminho não encontrado: /v1/a?b{'c' * 193} [...]."
    typed = _assert_error(api.get("/v1/me/monitoramentos/abc"), 404, "Not Found")
    assert typed["message"] == "Caminho não encontrado: /v1/me/monitoramentos/abc."
    refused = api.post(f"/v1/cnpj/{SERPRO}", content=b"{")
    body = _assert_error(refused, 405, "Method Not Allowed")
    assert body["message"] == (
        f"O método POST não é aceito em /v1/cnpj/{SERPRO}; o cabeçalho Allow lista os aceitos."
    )
    assert "GET" in refused.headers["Allow"]
    assert "POST" not in refused.headers["Allow"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_lookup_any_path_never_500(api: httpx.Client, raw: str) -> None:
    response = api.get("/v1/cnpj/" + quote(raw, safe=""))
    assert response.status_code in {200, 400, 404}
    assert response.headers["content-type"].startswith("application/json")


def test_status_all_up_reports_live_index(api: httpx.Client, peer_alias: str) -> None:
    for path in ("/v1/status", "/health"):
        response = api.get(path)
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "ok"
        assert {name: d["status"] for name, d in body["dependencies"].items()} == {
            "elasticsearch": "up", "postgresql": "up", "redis": "up"
        }  # fmt: skip
        assert body["index"]["alias"] == peer_alias
        assert body["index"]["name"].startswith(peer_alias + "-")
        assert body["index"]["documents"] == 1


def test_status_dependency_down_503(peer_alias: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("ELASTICSEARCH_URL", "http://127.0.0.1:1")
    server = Server(peer_alias, workers=1)
    try:
        status = httpx.get(f"{server.url}/v1/status", timeout=10)
        assert status.status_code == 503
        body = status.json()
        assert body["status"] == "degraded"
        assert body["dependencies"]["redis"]["status"] == "down"
        assert body["dependencies"]["elasticsearch"]["status"] == "down"
        assert body["dependencies"]["postgresql"]["status"] == "up"
        lookup = httpx.get(f"{server.url}/v1/cnpj/{SERPRO}", timeout=10)
        _assert_error(lookup, 503, "Service Unavailable")
    finally:
        server.stop()


@pytest.mark.parametrize(
    "path", [f"/v1/cnpj/{SERPRO}", "/v1/cnpj/validar/123", f"/cnpj/contato/{SERPRO}", "/health"]
)
def test_unknown_query_parameter_400_names_it(api: httpx.Client, path: str) -> None:
    body = _assert_error(api.get(path, params={"formato": "x", "b": "1"}), 400, "Bad Request")
    assert body["details"]["desconhecidos"] == ["b", "formato"]  # type: ignore[index]
    assert "formato" in str(body["message"])


def test_lookup_without_key_leaves_out_what_needs_a_key(api_server: Server) -> None:
    """The anonymous try-out reads the public registry record; contacts, partners and state
    registrations (what `/cnpj/contato`, `/socios` and `/sintegra` keep behind a key) are
    named in `restrito` instead."""
    with api_server.client("127.0.4.1", headers={}) as anonymous:
        response = anonymous.get(f"/v1/cnpj/{SERPRO}")
        assert anonymous.get(f"/v1/cnpj/contato/{SERPRO}").status_code == 401
        assert anonymous.get(f"/v1/sintegra/{SERPRO}").status_code == 401
        assert anonymous.get(f"/v1/socios/{SERPRO}").status_code == 401
    assert response.status_code == 200
    public = response.json()
    assert public["restrito"] == ["contato", "socios", "inscricoes_estaduais"]
    for field in public["restrito"]:
        assert field not in public
    with api_server.client() as keyed:
        full = keyed.get(f"/v1/cnpj/{SERPRO}").json()
    assert "restrito" not in full
    assert full["socios"]
    shared = {name: value for name, value in full.items() if name in public}
    assert shared == {name: public[name] for name in shared}
    assert set(full) - set(public) == set(public["restrito"])


def test_lookup_etag_revalidation(api: httpx.Client, api_server: Server) -> None:
    """A record's `ETag` comes from its content hash and the view; sending it back gets a 304
    without a body while the record is the same. Other records, the public view and tags
    that do not match get the record."""
    first = api.get(f"/v1/cnpj/{SERPRO}")
    tag = first.headers["etag"]
    assert tag.startswith('"')
    assert first.json()["hash"][:32] in tag
    assert first.headers["cache-control"] == "private, no-cache"
    again = api.get("/cnpj/33.683.111/0002-80", headers={"If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == tag
    assert "x-ratelimit-remaining" in again.headers
    for sent in (f"W/{tag}", f'"outra", {tag}', "*"):
        assert api.get(f"/v1/cnpj/{SERPRO}", headers={"If-None-Match": sent}).status_code == 304
    for sent in ('"outra"', tag[:-2] + '"', "", "x" * 5000):
        changed = api.get(f"/v1/cnpj/{SERPRO}", headers={"If-None-Match": sent})
        assert changed.status_code == 200
        assert changed.json()["cnpj"] == SERPRO
    with api_server.client("127.0.4.2", headers={}) as anonymous:
        public = anonymous.get(f"/v1/cnpj/{SERPRO}", headers={"If-None-Match": tag})
    assert public.status_code == 200, "the public view has a tag of its own"
    assert public.headers["etag"] != tag
