"""REST and the agent interface are two faces of one service layer: the same question asked of
a REST route and of its tool gets the same answer; and the new operations hold their meaning
(what is shared, the scope of similar companies, the market's counts)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import MakeKey, Server
from tests.mcp.conftest import NUMBERS, PARTNER, SAMPLE_CNPJ, SHARED_ADDRESS, rpc

TWINS = [
    ("consultar_cnpj", {"cnpj": SAMPLE_CNPJ}, f"/v1/cnpj/{SAMPLE_CNPJ}", {}),
    (
        "descobrir_segmentos_cnae",
        {"termo": "padaria", "uf": "SP"},
        "/v1/segmentos",
        {"termo": "padaria", "uf": "SP"},
    ),
    (
        "mapear_mercado_empresas",
        {"segmento": "47", "uf": "SP", "limit": 3},
        "/v1/mercado",
        {"segmento": "47", "uf": "SP", "limit": 3},
    ),
    (
        "encontrar_empresas_relacionadas",
        {"kind": "socio", "value": NUMBERS[0]},
        "/v1/relacionadas",
        {"kind": "socio", "value": NUMBERS[0]},
    ),
    (
        "encontrar_empresas_similares",
        {"cnpj": SAMPLE_CNPJ, "escopo": "brasil"},
        f"/v1/similares/{SAMPLE_CNPJ}",
        {"escopo": "brasil"},
    ),
    ("buscar_socios_relacionados", {"nome": PARTNER}, "/v1/socios/relacionados", {"nome": PARTNER}),
    (
        "buscar_empresas_por_regiao_cnae",
        {"cnae": "5611", "uf": "PR"},
        "/v1/seek",
        {"cnae": "5611", "uf": "PR"},
    ),
]


@pytest.fixture(scope="module")
def client(mcp_server: Server, make_key: MakeKey) -> Iterator[httpx.Client]:
    with mcp_server.client(headers=make_key().headers) as api:
        yield api


def _tool(client: httpx.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = rpc(
        client, "tools/call", {"name": name, "arguments": arguments}
    ).json()["result"]
    assert not result.get("isError"), result
    return dict(result["structuredContent"])


@pytest.mark.parametrize(("tool", "arguments", "path", "params"), TWINS, ids=[t[0] for t in TWINS])
def test_rest_twin_same_answer_as_tool(
    client: httpx.Client, tool: str, arguments: dict[str, Any], path: str, params: dict[str, Any]
) -> None:
    rest = client.get(path, params=params)
    assert rest.status_code == 200, rest.text
    assert _tool(client, tool, arguments) == rest.json()


def test_search_tool_takes_addresses_abroad(client: httpx.Client) -> None:
    found = _tool(client, "buscar_empresas", {"uf": "EX"})
    assert found["data"]
    assert {item["uf"] for item in found["data"]} == {"EX"}
    assert found == client.get("/v1/seek", params={"uf": "EX"}).json()


def test_search_tools_read_uf_like_rest(client: httpx.Client) -> None:
    """Either case and a list, as `/v1/seek` reads them; a bad one named like REST names it."""
    for uf in ("pr", "PR,sc"):
        for tool, extra in (
            ("buscar_empresas", {}),
            ("buscar_empresas_por_regiao_cnae", {"cnae": "5611"}),
        ):
            found = _tool(client, tool, {"uf": uf, "limit": 5, **extra})
            assert found == client.get("/v1/seek", params={"uf": uf, "limit": 5, **extra}).json()
            assert found["data"]
    result = rpc(
        client, "tools/call", {"name": "buscar_empresas", "arguments": {"uf": "XX"}}
    ).json()["result"]
    assert result["isError"] is True
    assert "uf" in result["content"][0]["text"]


@pytest.mark.parametrize(
    ("tool", "path", "arguments"),
    [
        ("descobrir_segmentos_cnae", "/v1/segmentos", {"termo": "56"}),
        ("mapear_mercado_empresas", "/v1/mercado", {"segmento": "56", "limit": 3}),
    ],
)
def test_market_tools_read_uf_like_rest(
    client: httpx.Client, tool: str, path: str, arguments: dict[str, Any]
) -> None:
    """A state in any case, on both faces; anything else refused naming `uf` on both."""
    upper = client.get(path, params={**arguments, "uf": "SP"}).json()
    assert upper["uf" if "termo" in arguments else "filtros"] is not None
    for uf in ("sp", " Sp "):
        assert _tool(client, tool, {**arguments, "uf": uf}) == upper
        assert client.get(path, params={**arguments, "uf": uf}).json() == upper
    for bad in ("EX", "XX", "S P"):
        rest = client.get(path, params={**arguments, "uf": bad})
        assert rest.status_code == 400
        assert rest.json()["details"]["campo"] == "uf"
        result = rpc(
            client, "tools/call", {"name": tool, "arguments": {**arguments, "uf": bad}}
        ).json()["result"]
        assert result["isError"] is True
        assert rest.json()["message"] in result["content"][0]["text"]


def test_search_tool_refusals_name_its_arguments(client: httpx.Client) -> None:
    """The search service says `municipio`; the tool's argument is `cidade`."""

    def refusal(arguments: dict[str, Any]) -> str:
        result = rpc(
            client, "tools/call", {"name": "buscar_empresas", "arguments": arguments}
        ).json()["result"]
        assert result["isError"] is True
        return str(result["content"][0]["text"])

    nothing = refusal({})
    assert '"cidade"' in nothing
    assert "municipio" not in nothing
    unknown_city = refusal({"cidade": "!!!"})
    assert "cidade:" in unknown_city
    assert "municipio" not in unknown_city


def test_market_names_addresses_abroad(client: httpx.Client) -> None:
    abroad = client.get("/v1/seek", params={"uf": "EX", "limit": 1}).json()["data"][0]
    division = abroad["cnae_principal"][:2]
    seek = client.get("/v1/seek", params={"cnae": division, "uf": "EX", "limit": 1}).json()
    market = client.get("/v1/mercado", params={"segmento": division}).json()
    counted = {row["codigo"]: row for row in market["por_uf"]}
    assert counted["EX"] == {"codigo": "EX", "descricao": "Exterior", "total": seek["total"]}
    assert all(row["descricao"] for row in market["por_uf"])


def test_related_each_kind_finds_what_is_shared(client: httpx.Client) -> None:
    cep, number = SHARED_ADDRESS
    cases = [
        ({"kind": "socio", "value": PARTNER.title()}, set(NUMBERS), PARTNER),
        ({"kind": "telefone", "value": "(41) 3333-4444"}, set(NUMBERS), "(41) 3333-4444"),
        ({"kind": "telefone", "value": NUMBERS[1]}, {NUMBERS[0], NUMBERS[2]}, "(41) 33334444"),
        (
            {"kind": "email", "value": "CONTATO@agente.example"},
            set(NUMBERS),
            "contato@agente.example",
        ),
        (
            {"kind": "endereco", "value": f"{cep[:5]}-{cep[5:]}, {number}"},
            set(NUMBERS),
            f"{cep} {number}",
        ),
        ({"kind": "endereco", "value": NUMBERS[2]}, {NUMBERS[0], NUMBERS[1]}, f"{cep} {number}"),
    ]
    for params, expected, shared in cases:
        body = client.get("/v1/relacionadas", params=params).json()
        assert {item["cnpj"] for item in body["data"]} == expected, params
        assert all(item["em_comum"] == [shared] for item in body["data"]), (params, body["data"])
        assert body["total"] == len(expected)


def test_related_paged_and_bad_values_named(client: httpx.Client) -> None:
    first = client.get("/v1/relacionadas", params={"kind": "socio", "value": PARTNER, "limit": 2})
    second = client.get(
        "/v1/relacionadas",
        params={
            "kind": "socio",
            "value": PARTNER,
            "limit": 2,
            "cursor": first.json()["next_cursor"],
        },
    ).json()
    seen = [i["cnpj"] for i in first.json()["data"]] + [i["cnpj"] for i in second["data"]]
    assert sorted(seen) == sorted(NUMBERS)
    assert second["next_cursor"] is None
    for params, field in (
        ({"kind": "cor", "value": "x"}, "kind"),
        ({"kind": "telefone", "value": "123"}, "value"),
        ({"kind": "email", "value": "sem-arroba"}, "value"),
        ({"kind": "endereco", "value": "rua tal"}, "value"),
        ({"kind": "socio", "value": "!!!"}, "value"),
    ):
        response = client.get("/v1/relacionadas", params=params)
        assert response.status_code == 400, params
        assert response.json()["details"]["campo"] == field
    unknown = client.get("/v1/relacionadas", params={"kind": "socio", "value": "00000000000191"})
    assert unknown.status_code == 404


def test_similar_scope_narrows_and_reasons_explain(client: httpx.Client) -> None:
    origin = client.get(f"/v1/cnpj/{SAMPLE_CNPJ}").json()
    found = {
        scope: client.get(
            f"/v1/similares/{SAMPLE_CNPJ}", params={"escopo": scope, "limit": 50}
        ).json()
        for scope in ("municipio", "uf", "brasil")
    }
    assert found["municipio"]["total"] <= found["uf"]["total"] <= found["brasil"]["total"]
    formatted = f"{SAMPLE_CNPJ[:2]}.{SAMPLE_CNPJ[2:5]}.{SAMPLE_CNPJ[5:8]}/{SAMPLE_CNPJ[8:12]}-"
    same = client.get(f"/v1/similares/{formatted}{SAMPLE_CNPJ[12:]}", params={"limit": 50})
    assert same.status_code == 200, same.text  # the slash of a formatted CNPJ, as in lookups
    assert same.json() == found["uf"]
    klass = origin["cnae_principal"]["grupo"]["classe"]
    for scope, body in found.items():
        for item in body["data"]:
            assert item["cnpj"][:8] != SAMPLE_CNPJ[:8]
            assert item["situacao_cadastral"] == "ATIVA"
            assert item["cnae_principal"].startswith(klass)
            same_subclass = item["cnae_principal"] == origin["cnae_principal"]["codigo"]
            assert same_subclass == any(m.startswith("mesma atividade") for m in item["motivos"])
            if scope == "uf":
                assert item["uf"] == origin["endereco"]["uf"]
    scores = [item["score"] for item in found["brasil"]["data"]]
    assert scores == sorted(scores, reverse=True)


def test_market_counts_agree_with_search(client: httpx.Client) -> None:
    market = client.get("/v1/mercado", params={"segmento": "47", "uf": "SP", "limit": 5}).json()
    seek = client.get("/v1/seek", params={"cnae": "47", "uf": "SP", "limit": 1}).json()
    active = client.get("/v1/seek", params={"cnae": "47", "uf": "SP", "situacao": "ativa"}).json()
    assert market["total"] == seek["total"]
    assert market["ativas"] == active["total"]
    assert market["por_uf"] == [{"codigo": "SP", "descricao": "São Paulo", "total": seek["total"]}]
    assert sum(s["total"] for s in market["por_situacao"]) == market["total"]
    assert [c["total"] for c in market["por_municipio"]] == sorted(
        (c["total"] for c in market["por_municipio"]), reverse=True
    )
    unknown = client.get("/v1/mercado", params={"segmento": "zzzqqqxxx"})
    assert unknown.status_code == 400
    assert "descobrir_segmentos_cnae" in unknown.json()["message"]


def test_completion_counts_what_the_catalog_matches_as_rest_does(client: httpx.Client) -> None:
    cases = [
        ({"type": "ref/prompt", "name": "gerar_leads_b2b"}, "cidade", "sao",
         "/v1/search/cidade"),
        ({"type": "ref/resource", "uri": "service://cnaes/{codigo}"}, "codigo", "47",
         "/v1/search/cnae"),
    ]  # fmt: skip
    for ref, name, value, path in cases:
        answer = rpc(
            client, "completion/complete", {"ref": ref, "argument": {"name": name, "value": value}}
        )
        completion = answer.json()["result"]["completion"]
        rest = client.get(path, params={"query": value}).json()
        assert completion["total"] == rest["total"], (name, completion)
        assert rest["total"] > len(completion["values"]) > 0, name  # the sample has more
        assert completion["hasMore"] is True


@pytest.mark.parametrize(
    ("tool", "path"),
    [("consultar_cnpj", "/v1/cnpj/{}"), ("encontrar_empresas_similares", "/v1/similares/{}")],
)
def test_cnpj_refusals_give_the_reason_rest_gives(
    client: httpx.Client, tool: str, path: str
) -> None:
    """Empty, or past the 64 characters read as a CNPJ: the tool says why in the words of the
    REST twin (`motivo` vazio or tamanho), not a generic length bound of its argument."""
    padded = "33.683.111/0002-80".ljust(64)
    for cnpj, motivo in (("", None), (padded + "GARBAGE", "tamanho"), ("9" * 5000, "tamanho")):
        result = rpc(client, "tools/call", {"name": tool, "arguments": {"cnpj": cnpj}}).json()
        assert result["result"]["isError"] is True, cnpj
        said = result["result"]["content"][0]["text"]
        if motivo is None:
            assert "CNPJ inválido: CNPJ vazio." in said
            continue
        rest = client.get(path.format(cnpj))
        assert rest.status_code == 400
        assert rest.json()["details"]["motivo"] == motivo
        assert rest.json()["message"] in said


def _refused(client: httpx.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = rpc(
        client, "tools/call", {"name": name, "arguments": arguments}
    ).json()["result"]
    assert result["isError"] is True, result
    return result


def test_values_once_read_loosely_are_refused_on_both_faces(client: httpx.Client) -> None:
    """A CNPJ gone wrong is not searched as a partner's name, a tab or another space is no
    formatting of a document or a CNAE code, an empty `uf` is not "no state", and a refused
    unknown argument names itself, not the argument to use instead."""
    wrong_digit = "00251126000130"
    refused = {
        "/v1/relacionadas": {"kind": "socio", "value": wrong_digit},
        "/v1/socios/relacionados": {"doc": "0025112\u00a06000139"},
        "/v1/seek": {"cnae": "56\x1c11"},
        "/v1/leads/contagem": {"segmento": "restaurantes", "uf": ""},
    }
    for path, params in refused.items():
        answer = client.get(path, params=params)
        assert answer.status_code == 400, (path, answer.text)
    long_one = client.get("/v1/relacionadas", params={"kind": "socio", "value": "9" * 15})
    assert long_one.json()["details"]["motivo"] == "tamanho"
    socio = {"kind": "socio", "value": wrong_digit}
    related = _refused(client, "encontrar_empresas_relacionadas", socio)
    assert "CNPJ inválido" in related["content"][0]["text"]
    unknown = _refused(client, "buscar_empresas", {"cnae": "5611", "municipio": "Curitiba"})
    assert '"campo":"municipio"' in unknown["content"][0]["text"]


@pytest.mark.parametrize("odd", ["\x00", "\u202e", "\n"])
def test_free_text_refuses_control_characters_on_both_faces(client: httpx.Client, odd: str) -> None:
    """A NUL, a bidirectional override or a line break in a name, a term, a segment or a related
    value is refused naming the field, as in a city or a label, never searched nor echoed."""
    rest = {
        "/v1/search": {"q": f"padaria{odd}"},
        "/v1/nome": {"nome": f"padaria{odd}"},
        "/v1/socios/relacionados": {"nome": f"maria{odd}"},
        "/v1/segmentos": {"termo": f"padaria{odd}"},
        "/v1/mercado": {"segmento": f"restaurantes{odd}"},
        "/v1/relacionadas": {"kind": "email", "value": f"a{odd}b@x.com"},
    }
    for path, params in rest.items():
        answer = client.get(path, params=params)
        assert answer.status_code == 400, (path, answer.text)
        assert "controle" in answer.json()["message"], path
    tools = {
        "buscar_empresas": {"nome": f"padaria{odd}"},
        "descobrir_segmentos_cnae": {"termo": f"padaria{odd}"},
        "mapear_mercado_empresas": {"segmento": f"restaurantes{odd}"},
    }
    for name, arguments in tools.items():
        assert "controle" in _refused(client, name, arguments)["content"][0]["text"], name
