"""`/search`, `/seek` and `/nome` on a release of real names among generated ones."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, Loader, Server, generic_key

sys.path.insert(0, str(ROOT / "scripts"))
from search_eval import build_release, evaluate, load_queries

SAMPLE = ROOT / "fixtures" / "sample"


@pytest.fixture(scope="module")
def alias(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> str:
    release = tmp_path_factory.mktemp("eval") / "release"
    build_release(release, background=3000)
    name = new_alias()
    load(release, name)
    return name


@pytest.fixture(scope="module")
def server(alias: str) -> Iterator[Server]:
    running = Server(alias, workers=2)
    yield running
    assert "Traceback" not in running.stop()


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with server.client(timeout=30) as client:
        yield client


def test_name_relevance_on_labelled_queries(server: Server) -> None:
    # Gates about 0.01 under the figures measured on this release (MRR@10 0.9990, hit@1
    # 0.9982), so a lost point fails. Per kind, every kind is 1.0 but prefix (0.9957) and typo
    # (0.9952); the spelling kinds (first_letter, connector) were 0.00 and 0.80 before the
    # relaxed pass, the sound keys and the optional connectors.
    queries = load_queries()[::6]
    result = evaluate(server.url, queries, "nome", generic_key().key)
    assert result["queries"] > 1000
    assert result["mrr_at_10"] >= 0.989, result["worst"]
    assert result["hit_at_1"] >= 0.988, result["worst"]
    floors = {"prefix": 0.985, "typo": 0.985}
    kinds = result["by_kind"]
    assert len(kinds) == 12, kinds
    low = {k: v for k, v in kinds.items() if v["mrr_at_10"] < floors.get(k, 0.99)}
    assert not low, (low, result["worst"])


def test_search_relevance_on_labelled_queries(server: Server) -> None:
    # Measured MRR@10 0.9981, hit@1 0.9971; per kind 1.0 but typo (0.9770).
    result = evaluate(server.url, load_queries()[3::20], "search", generic_key().key)
    assert result["mrr_at_10"] >= 0.988, result["worst"]
    assert result["hit_at_1"] >= 0.987, result["worst"]
    kinds = result["by_kind"]
    assert len(kinds) == 12, kinds
    low = {k: v for k, v in kinds.items() if v["mrr_at_10"] < {"typo": 0.967}.get(k, 0.99)}
    assert not low, (low, result["worst"])


def test_first_letter_spelled_another_way_found(api: httpx.Client) -> None:
    """`KARLITO PNEUS` for the sample's `CARLITO PNEUS` (00532451000170): the sound keys meet
    the spelling, on every name route."""
    for path, param in (("/v1/search", "q"), ("/v1/nome", "nome"), ("/v1/seek", "nome")):
        page = api.get(path, params={param: "karlito pneus"}).json()
        assert page["data"][0]["cnpj"] == "00532451000170", (path, page)


def test_relaxed_pass_when_the_strict_one_finds_nothing(api: httpx.Client) -> None:
    """`BARLITO PNEUS`: no name has a word like `barlito`, by letters or by sound, so the strict
    pass finds nothing; the relaxed one lets a typo touch the first letter and not every word
    match, and pages with cursors of its own."""
    first = api.get("/v1/search", params={"q": "barlito pneus", "limit": 2}).json()
    assert first["filtros"]["busca_ampliada"] is True
    assert first["data"][0]["cnpj"] == "00532451000170"
    assert first["total"] > 2
    seen = [item["cnpj"] for item in first["data"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api.get(
            "/v1/search", params={"q": "barlito pneus", "limit": 2, "cursor": cursor}
        ).json()
        assert page["filtros"]["busca_ampliada"] is True
        seen += [item["cnpj"] for item in page["data"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == first["total"]
    # A cursor of the relaxed pass is refused by another request.
    other = api.get("/v1/search", params={"q": "carlito pneus", "cursor": first["next_cursor"]})
    assert other.status_code == 400
    assert other.json()["details"]["campo"] == "cursor"


def test_each_pass_pages_with_cursors_of_its_own(api: httpx.Client) -> None:
    """The words as typed are tried first; a typo only the tolerant pass forgives (`pnues`) is
    answered by that pass. Either way the cursors continue the pass that made them: every
    company once, as many as the total."""
    for typed in ("pneus", "pnues"):
        first = api.get("/v1/search", params={"q": typed, "limit": 1}).json()
        assert first["total"] > 1, typed
        assert "busca_ampliada" not in first["filtros"]
        seen = [item["cnpj"] for item in first["data"]]
        cursor = first["next_cursor"]
        while cursor:
            page = api.get("/v1/search", params={"q": typed, "limit": 1, "cursor": cursor})
            assert page.status_code == 200, page.text
            seen += [item["cnpj"] for item in page.json()["data"]]
            cursor = page.json()["next_cursor"]
        assert len(seen) == len(set(seen)) == first["total"], typed


def test_two_typos_in_a_word_left_to_the_relaxed_pass(api: httpx.Client) -> None:
    """The tolerant pass forgives one typo per word (`servcie` for the sample's `MISTER -
    SERVICE`, 13810056000153); a word with two (`srevcie`) matches no name with one edit, and
    the relaxed pass, which allows two in a word of six letters or more, finds the company."""
    one = api.get("/v1/search", params={"q": "mister servcie"}).json()
    assert one["data"][0]["cnpj"] == "13810056000153", one["data"][:2]
    assert "busca_ampliada" not in one["filtros"]
    two = api.get("/v1/search", params={"q": "mister srevcie"}).json()
    assert two["data"][0]["cnpj"] == "13810056000153", two["data"][:2]
    assert two["filtros"]["busca_ampliada"] is True


def test_connector_words_ranked_not_required(api: httpx.Client) -> None:
    """`&` typed as `e` or `and`, and the other way round: found by the strict pass."""
    for typed in ("prints e co", "prints and co", "prints & co"):
        page = api.get("/v1/search", params={"q": typed}).json()
        assert page["data"][0]["cnpj"] == "00805768000132", (typed, page["data"][:2])
        assert "busca_ampliada" not in page["filtros"]


def test_strict_matches_need_no_relaxed_pass(api: httpx.Client) -> None:
    page = api.get("/v1/search", params={"q": "carlito pneus"}).json()
    assert page["data"][0]["cnpj"] == "00532451000170"
    assert "busca_ampliada" not in page["filtros"]
    nothing = api.get("/v1/search", params={"q": "qxwzk vbnmq"}).json()
    assert (nothing["total"], nothing["filtros"]["busca_ampliada"]) == (0, True)


def test_search_tolerates_sloppy_names(api: httpx.Client) -> None:
    # Real trade name of the sample: "MISTER - SERVICE" (13810056000153).
    for typed in ("mister service", "Míster-Servíce", "SERVICE MISTER", "mistr service",
                  "misterservice", "mister serv"):  # fmt: skip
        top = api.get("/v1/search", params={"q": typed}).json()["data"]
        assert top, typed
        assert top[0]["cnpj"] == "13810056000153", typed


def test_search_finds_partner_names(api: httpx.Client, es: Elasticsearch, alias: str) -> None:
    found = es.search(
        index=alias, query={"exists": {"field": "busca.socios"}}, size=1, source=["cnpj", "socios"]
    )["hits"]["hits"][0]["_source"]
    partner = found["socios"][0]["nome"]
    hits = api.get("/search", params={"q": partner, "limit": 100}).json()["data"]
    assert found["cnpj"] in [hit["cnpj"] for hit in hits]
    by_name = api.get("/nome", params={"nome": partner, "limit": 100}).json()["data"]
    assert found["cnpj"] not in [hit["cnpj"] for hit in by_name]  # /nome is names only


def test_active_and_matriz_rank_first_among_equals(api: httpx.Client) -> None:
    """Filters alone: active establishments first, then the matriz, then by CNPJ, each with
    the score the documented boosts give it (1, +1.5 active, +0.5 matriz), across pages."""
    hits: list[dict[str, Any]] = []
    cursor = None
    while cursor or not hits:
        params = {"uf": "SP", "limit": "100", **({"cursor": cursor} if cursor else {})}
        page = api.get("/seek", params=params).json()
        hits += page["data"]
        cursor = page["next_cursor"]
    assert len(hits) == page["total"]
    ranks = [(h["situacao_cadastral"] == "ATIVA", h["matriz_filial"] == "MATRIZ") for h in hits]
    assert set(ranks) == {(a, m) for a in (True, False) for m in (True, False)}  # all four
    expected = sorted(hits, key=lambda h: (*(not r for r in _rank(h)), h["cnpj"]))
    assert [h["cnpj"] for h in hits] == [h["cnpj"] for h in expected]
    for hit, (active, matriz) in zip(hits, ranks, strict=True):
        assert hit["score"] == 1.0 + 1.5 * active + 0.5 * matriz, hit


def _rank(hit: dict[str, Any]) -> tuple[bool, bool]:
    return hit["situacao_cadastral"] == "ATIVA", hit["matriz_filial"] == "MATRIZ"


def _es_count(es: Elasticsearch, alias: str, query: dict[str, Any]) -> int:
    return int(es.count(index=alias, query=query)["count"])


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"uf": "BA,PE"}, lambda hit: hit["uf"] in {"BA", "PE"}),
        ({"cnae": "47"}, lambda hit: hit["cnae_principal"].startswith("47")),
        ({"cnae": "4781-4/00"}, lambda hit: hit["cnae_principal"] == "4781400"),
        ({"cep": "010"}, lambda hit: hit["cep"].startswith("010")),
        ({"capital_min": "1000", "capital_max": "50000"},
         lambda hit: 1000 <= hit["capital_social"] <= 50000),
        ({"abertura_de": "2010-01-01", "abertura_ate": "2012-12-31"},
         lambda hit: "2010-01-01" <= hit["abertura"] <= "2012-12-31"),
        ({"situacao": "baixada"}, lambda hit: hit["situacao_cadastral"] == "BAIXADA"),
        ({"matriz": "false"}, lambda hit: hit["matriz_filial"] == "FILIAL"),
        ({"municipio": "3550308"}, lambda hit: hit["codigo_ibge"] == "3550308"),
        ({"porte": "me,epp"},
         lambda hit: hit["porte"] in {"MICRO EMPRESA", "EMPRESA DE PEQUENO PORTE"}),
    ],
)  # fmt: skip
def test_seek_filters_hold_on_every_hit(
    api: httpx.Client, params: dict[str, str], check: Callable[[dict[str, Any]], bool]
) -> None:
    for method in ("GET", "POST"):
        if method == "GET":
            response = api.get("/v1/seek", params={**params, "limit": "100"})
        else:
            body = {**params, "limit": 100}
            for key in ("capital_min", "capital_max"):
                if key in body:
                    body[key] = float(body[key])
            body = {k: (v == "true" if v in ("true", "false") else v) for k, v in body.items()}
            response = api.post("/v1/seek", json=body)
        assert response.status_code == 200, response.text
        page = response.json()
        assert page["total"] > 0, params
        assert all(check(hit) for hit in page["data"]), params


def test_seek_total_matches_index(api: httpx.Client, es: Elasticsearch, alias: str) -> None:
    page = api.get("/seek", params={"uf": "BA", "com_email": "true"}).json()
    expected = _es_count(es, alias, {"bool": {"filter": [
        {"term": {"endereco.uf": "BA"}}, {"term": {"contato.disponibilidade.email": True}}
    ]}})  # fmt: skip
    assert page["total"] == expected > 0


def test_facets_count_the_whole_result(api: httpx.Client) -> None:
    page = api.get("/seek", params={"cnae": "47", "facets": "uf,situacao,cnae"}).json()
    assert sum(item["total"] for item in page["facets"]["situacao"]) == page["total"]
    assert [item["valor"] for item in page["facets"]["cnae"]] == ["47"]


def _all_pages(api: httpx.Client, path: str, params: dict[str, str]) -> tuple[list[str], int]:
    seen: list[str] = []
    cursor = None
    while True:
        page = api.get(path, params={**params, **({"cursor": cursor} if cursor else {})}).json()
        seen += [hit["cnpj"] for hit in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return seen, page["total"]


def test_cursor_walks_every_hit_once(api: httpx.Client) -> None:
    seen, total = _all_pages(api, "/v1/search", {"q": "mercado", "limit": "13"})
    assert total > 13
    assert len(seen) == len(set(seen)) == total


def test_cursor_tampered_or_reused_with_other_filters(api: httpx.Client) -> None:
    first = api.get("/seek", params={"uf": "SP", "limit": "2"}).json()
    cursor = first["next_cursor"]
    assert cursor
    for params in ({"uf": "RJ", "cursor": cursor}, {"uf": "SP", "cursor": cursor[:-4] + "AAAA"},
                   {"uf": "SP", "cursor": "x" * 5000}, {"uf": "SP", "cursor": "%%%"}):  # fmt: skip
        response = api.get("/seek", params=params)
        assert response.status_code == 400, params
        assert response.json()["details"]["campo"] == "cursor"


def test_cursor_pages_the_same_filters_in_any_case_or_spacing(api: httpx.Client) -> None:
    """A filter is read in any case (`uf=sp` is `uf=SP`): the next page of the same search
    takes its cursor whichever way the client writes the filters."""
    first = api.get("/seek", params={"uf": "SP", "limit": "2"}).json()
    second = api.get("/seek", params={"uf": "SP", "limit": "2", "cursor": first["next_cursor"]})
    again = api.get("/seek", params={"uf": " sp", "limit": "2", "cursor": first["next_cursor"]})
    assert again.status_code == 200, again.text
    assert again.json()["data"] == second.json()["data"]
    words = api.get("/v1/search", params={"q": "mercado", "limit": "2"}).json()
    shouted = api.get("/v1/search", params={"q": " MERCADO ", "limit": "2",
                                             "cursor": words["next_cursor"]})  # fmt: skip
    assert shouted.status_code == 200, shouted.text


def test_cursor_survives_release_swap(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    name = new_alias()
    load(SAMPLE, name)
    server = Server(name, workers=1)
    try:
        with server.client(timeout=30) as client:
            first = client.get("/seek", params={"uf": "SP", "limit": "5"}).json()
            release = tmp_path / "smaller"
            release.mkdir()
            for path in SAMPLE.glob("*.csv"):
                if "ESTABELE" not in path.name:
                    shutil.copy(path, release / path.name)
            lines = (SAMPLE / "ESTABELE.csv").read_bytes().splitlines(keepends=True)
            (release / "ESTABELE.csv").write_bytes(b"".join(lines[:300]))
            load(release, name)  # the alias now serves a release with fewer companies
            assert client.get("/seek", params={"uf": "SP"}).json()["total"] < first["total"]
            rest, _ = _all_pages(
                client, "/seek", {"uf": "SP", "limit": "5", "cursor": first["next_cursor"]}
            )
            seen = [hit["cnpj"] for hit in first["data"]] + rest
            assert len(seen) == len(set(seen)) == first["total"]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/search", {}, None),
        ("/search", {"q": ""}, "q"),
        ("/search", {"q": "a" * 10_000}, "q"),
        ("/search", {"q": "*"}, "q"),
        ("/search", {"q": "x", "limit": "-1"}, "limit"),
        ("/search", {"q": "x", "limit": "100000000000000000000"}, "limit"),
        ("/search", {"q": "x", "nome": "y"}, None),
        ("/seek", {"q": "x"}, None),
        ("/seek", {"uf": "SP", "color": "red"}, None),
        ("/seek", {"uf": "SP", "capital_min": "muito"}, "capital_min"),
        ("/seek", {"uf": "SP", "abertura_de": "ontem"}, "abertura_de"),
        ("/nome", {}, "nome"),
        ("/nome", {"nome": "x", "cnae": "47"}, None),
    ],
)
def test_bad_search_input_named(
    api: httpx.Client, path: str, params: dict[str, str], field: str | None
) -> None:
    response = api.get(path, params=params)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "Bad Request"
    if field:
        assert body["details"]["campo"] == field


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{nome", 400), (b"[]", 400), (b'{"nome": "x", "limit": "10"}', 400),
        (b'{"nome": "x", "filtro": 1}', 400), (b'{"q": "x"}', 400), (b"", 400),
        (b'{"nome": "padaria"}', 200),
    ],
)  # fmt: skip
def test_seek_body_checked(api: httpx.Client, body: bytes, status: int) -> None:
    response = api.post("/seek", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text


@pytest.mark.parametrize(
    ("typed", "terms"),
    [
        ('"mercado', ["mercado"]),
        ("mercado AND NOT padaria", ["mercado", "and", "not", "padaria"]),
        ("/merc.*/", ["merc"]),
        ("mercado~2", ["mercado", "2"]),
        ("merc*", ["merc"]),
    ],
)
def test_query_syntax_is_plain_text(api: httpx.Client, typed: str, terms: list[str]) -> None:
    """Operators of a query language are searched as the words around them, never run."""
    response = api.get("/search", params={"q": typed})
    assert response.status_code == 200, response.text
    assert response.json()["filtros"]["termos"] == terms


def test_query_of_control_characters_only_400_naming_q(api: httpx.Client) -> None:
    response = api.get("/search", params={"q": "\x00\x1b"})
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == "q"


@pytest.mark.parametrize("city", ["Curitiba\x00", "Curitiba\u202e", "Curi\ntiba"])
def test_a_city_with_control_characters_400_as_in_the_agents_tools(
    api: httpx.Client, city: str
) -> None:
    """`/seek`'s `municipio` takes what `buscar_empresas`'s `cidade` takes: no control
    characters (the tool refused them while REST searched without them)."""
    response = api.get("/v1/seek", params={"municipio": city})
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == "municipio"
    assert "caracteres de controle" in response.json()["message"]
    assert api.get("/v1/seek", params={"municipio": "Curitiba"}).status_code == 200


@settings(max_examples=60)
@given(
    st.sampled_from(["/search", "/seek", "/nome"]),
    st.dictionaries(
        st.sampled_from(["q", "nome", "uf", "cnae", "cep", "limit", "cursor", "capital_min",
                         "situacao", "facets", "telefone", "municipio", "zzz"]),
        st.text(max_size=40),
        max_size=4,
    ),
)  # fmt: skip
def test_any_input_is_200_or_400(api: httpx.Client, path: str, params: dict[str, str]) -> None:
    response = api.get(path, params=params)
    assert response.status_code in (200, 400), response.text
    assert response.headers["content-type"].startswith("application/json")


def test_filters_echoed_as_applied_not_as_typed(api: httpx.Client) -> None:
    """Two spellings of one search answer the same `filtros`: the codes and forms compared, so
    a client sees what was applied (and that `sp` was read as SP)."""
    typed = {"q": "padaria", "uf": "sp, rj", "cnae": "10.91-1/02", "municipio": "São PAULO",
             "situacao": "ATIVA", "cep": "01.310", "porte": "ME"}  # fmt: skip
    plain = {"q": "padaria", "uf": "RJ,SP", "cnae": "1091102", "municipio": "sao paulo",
             "situacao": "02", "cep": "01310", "porte": "01"}  # fmt: skip
    echoed = [api.get("/v1/search", params=params) for params in (typed, plain)]
    assert [answer.status_code for answer in echoed] == [200, 200], echoed[0].text
    first, second = (answer.json()["filtros"] for answer in echoed)
    assert first == second
    assert first["uf"] == ["RJ", "SP"]
    assert (first["cnae"], first["cep"], first["situacao"]) == ("1091102", "01310", ["02"])
