"""`/search/cnae`, `/search/cidade` and `/seek/cidades` on the bundled sample release."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.catalog import catalog_name
from tests.conftest import RECEITA_SAMPLE, ROOT, Loader, Server

SAMPLE = ROOT / "fixtures" / "sample"
CATEGORIES = ROOT / "fixtures" / "reference" / "categorias-cnae.json"


@pytest.fixture(scope="module")
def alias(load: Loader, new_alias: Callable[[], str]) -> str:
    name = new_alias()
    load(SAMPLE, name)
    return name


@pytest.fixture(scope="module")
def api(alias: str) -> Iterator[httpx.Client]:
    server = Server(alias, workers=2)
    with server.client(timeout=30) as client:
        yield client
    assert "Traceback" not in server.stop()


def _data(api: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    response = api.get(path, params=params)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["data"]
    return found


def test_cnae_by_code_prefix_sorted_by_use(api: httpx.Client) -> None:
    found = _data(api, "/search/cnae", query="47", limit=50)
    assert len(found) == 50
    assert all(item["codigo"].startswith("47") for item in found)
    counts = [item["empresas"] for item in found]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > 0


def test_cnae_formatted_code_has_hierarchy(api: httpx.Client) -> None:
    (item,) = _data(api, "/v1/search/cnae", query="4711-3/02")
    assert item["codigo"] == "4711302"
    assert item["codigo_formatado"] == "4711-3/02"
    assert item["hierarquia"] == {
        "secao": {
            "codigo": "G",
            "descricao": "Comércio; reparação de veículos automotores e motocicletas",
        },
        "divisao": "47",
        "grupo": "471",
        "classe": "47113",
        "subclasse": "4711302",
    }
    assert item["descricao"].endswith("supermercados")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("padaria", "4721102"),
        ("PADARIA E CONFEITARIA", "4721102"),
        ("farmaceuticos sem manipulacao", "4771701"),
        ("Farmacêuticos sem manipulação", "4771701"),
        ("restaurnte", "5611201"),
        ("com var supermerc", "4711302"),
        ("cabeleir", "9602501"),
    ],
)
def test_cnae_by_description_words(api: httpx.Client, typed: str, expected: str) -> None:
    codes = [item["codigo"] for item in _data(api, "/search/cnae", query=typed, limit=3)]
    assert expected in codes, (typed, codes)


def test_cnae_typo_ranks_after_words_typed_right(api: httpx.Client) -> None:
    typo = [item["codigo"] for item in _data(api, "/search/cnae", query="padria", limit=50)]
    assert "4721102" in typo[:3]  # padaria, one edit away; `para` (two) is not offered
    assert not any("para" in item["descricao"].lower().split()
                   for item in _data(api, "/search/cnae", query="padria", limit=50))  # fmt: skip


@pytest.mark.parametrize(
    ("typed", "params"),
    [
        ("sao paulo", {}),
        ("São Paulo", {}),
        ("SAO PAU", {}),
        ("sao", {}),
        ("s", {}),
        ("sao paulo", {"uf": "sp"}),
        ("7107", {}),
        ("3550308", {}),
    ],
)
def test_city_sao_paulo_first(api: httpx.Client, typed: str, params: dict[str, str]) -> None:
    top = _data(api, "/search/cidade", query=typed, **params)[0]
    assert top == {
        "codigo": "7107",
        "codigo_ibge": "3550308",
        "nome": "São Paulo",
        "uf": "SP",
        "empresas": top["empresas"],
    }


def test_city_counts_match_the_release(api: httpx.Client, es: Elasticsearch, alias: str) -> None:
    top = _data(api, "/search/cidade", query="sao paulo")[0]
    indexed = es.count(index=alias, query={"term": {"endereco.municipio.codigo": "7107"}})
    assert top["empresas"] == indexed["count"] > 0


def test_city_typo_and_uf_filter(api: httpx.Client) -> None:
    # one edit in a word under 8 letters: Curiúva and Cuiabá are two away
    assert [item["nome"] for item in _data(api, "/search/cidade", query="curitba")] == ["Curitiba"]
    in_rj = _data(api, "/search/cidade", query="sao", uf="RJ", limit=50)
    assert in_rj
    assert {item["uf"] for item in in_rj} == {"RJ"}
    starts = [item["nome"].startswith("São") for item in in_rj]
    assert starts[0]
    assert starts == sorted(starts, reverse=True)  # names starting with the text come first


def test_catalog_holds_every_reference_row(es: Elasticsearch, alias: str) -> None:
    def rows(name: str) -> int:
        with (SAMPLE / name).open(encoding="latin-1") as stream:
            return sum(1 for _ in csv.reader(stream, delimiter=";"))

    catalog = catalog_name(alias)
    assert es.count(index=catalog, query={"term": {"tipo": "cnae"}})["count"] == rows("CNAECSV.csv")
    cities = es.count(index=catalog, query={"term": {"tipo": "municipio"}})["count"]
    assert cities == rows("MUNICCSV.csv")


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/search/cnae", {}, None),
        ("/search/cnae", {"query": ""}, "query"),
        ("/search/cnae", {"query": "   "}, "query"),
        ("/search/cnae", {"query": "x" * 101}, "query"),
        ("/search/cnae", {"query": "47113021"}, "query"),
        ("/search/cnae", {"query": "47", "limit": "0"}, "limit"),
        ("/search/cnae", {"query": "47", "limit": "51"}, "limit"),
        ("/search/cnae", {"query": "47", "limit": "abc"}, None),
        ("/search/cnae", {"query": "47", "uf": "SP"}, None),
        ("/search/cidade", {"query": "12345"}, "query"),
        ("/search/cidade", {"query": "sao", "uf": "XX"}, "uf"),
        ("/search/cidade", {"query": "--"}, "query"),
        ("/seek/cidades", {"municipio": "7107"}, "categoria"),
        ("/seek/cidades", {"categoria": "padarias"}, "municipio"),
        ("/seek/cidades", {"municipio": "7107", "categoria": "nada"}, "categoria"),
        ("/seek/cidades", {"municipio": "7107", "categoria": "padarias", "cnae": "47"}, None),
    ],
)
def test_bad_input_is_400_naming_the_field(
    api: httpx.Client, path: str, params: dict[str, str], field: str | None
) -> None:
    response = api.get(path, params=params)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == "Bad Request"
    if field:
        assert error["details"]["campo"] == field


def test_unknown_category_lists_the_slugs(api: httpx.Client) -> None:
    response = api.get("/seek/cidades", params={"municipio": "7107", "categoria": "nada"})
    assert response.json()["details"]["aceitos"] == sorted(
        json.loads(CATEGORIES.read_text(encoding="utf-8"))["categorias"]
    )


def test_categories_listed_with_real_cnae_codes(api: httpx.Client) -> None:
    listed = _data_list(api.get("/v1/seek/cidades/categorias"))
    with (RECEITA_SAMPLE / "CNAECSV.csv").open(encoding="latin-1") as stream:
        real = {row[0] for row in csv.reader(stream, delimiter=";")}
    assert len(listed) >= 20
    for category in listed:
        assert category["cnaes"], category
        assert set(category["cnaes"]) <= real, category


def _data_list(response: httpx.Response) -> list[dict[str, Any]]:
    """The items of a one-page list: `{data, total, next_cursor: null}`."""
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["total"] == len(page["data"])
    assert page["next_cursor"] is None
    found: list[dict[str, Any]] = page["data"]
    return found


def test_seek_cidades_filters_city_and_category(api: httpx.Client, es: Elasticsearch) -> None:
    categories = json.loads(CATEGORIES.read_text(encoding="utf-8"))["categorias"]
    codes = set(categories["restaurantes"]["cnaes"])
    params = {"municipio": "sao paulo", "uf": "SP", "categoria": "restaurantes", "limit": 100}
    response = api.get("/seek/cidades", params=params)
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["data"]
    assert page["total"] == len(page["data"])
    for hit in page["data"]:
        assert hit["cnae_principal"] in codes
        assert (hit["uf"], hit["codigo_ibge"]) == ("SP", "3550308")
    by_code = api.get("/v1/seek/cidades", params={**params, "municipio": "3550308"}).json()
    assert [hit["cnpj"] for hit in by_code["data"]] == [hit["cnpj"] for hit in page["data"]]


def test_seek_takes_category_filter(api: httpx.Client) -> None:
    page = api.get("/seek", params={"categoria": "padarias", "limit": 100}).json()
    assert page["data"]
    assert {hit["cnae_principal"] for hit in page["data"]} <= {"4721101", "4721102"}


@settings(max_examples=40)
@given(
    st.sampled_from(["/search/cnae", "/search/cidade", "/seek/cidades"]),
    st.dictionaries(
        st.sampled_from(["query", "uf", "limit", "municipio", "categoria", "zzz"]),
        st.text(max_size=30),
        max_size=3,
    ),
)
def test_any_input_is_200_or_400(api: httpx.Client, path: str, params: dict[str, str]) -> None:
    response = api.get(path, params=params)
    assert response.status_code in (200, 400), response.text
    assert response.headers["content-type"].startswith("application/json")


def test_segments_of_a_term_no_activity_matches_are_empty(api: httpx.Client) -> None:
    """No CNAE matches the term: an empty list, not a failed count (found by the contract
    fuzzer: the count asked Elasticsearch for zero buckets)."""
    answer = api.get("/v1/segmentos", params={"termo": "xyzzy quux"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == []


@pytest.mark.parametrize("query", ["٧١٠٧", "²³¹¹", "12345"])
def test_city_search_by_other_digits_or_lengths_refused(api: httpx.Client, query: str) -> None:
    """A city's code is 4 or 7 ASCII digits; other digits are no name to search either."""
    response = api.get("/search/cidade", params={"query": query})
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == "query"


@pytest.mark.parametrize("path", ["/v1/segmentos", "/v1/mercado"])
def test_market_uf_read_in_any_case(api: httpx.Client, path: str) -> None:
    """`uf=sp` is `uf=SP` here as on every other filter of the service."""
    name = "termo" if path.endswith("segmentos") else "segmento"
    upper = api.get(path, params={name: "56", "uf": "SP"})
    lower = api.get(path, params={name: "56", "uf": " sp"})
    assert upper.status_code == lower.status_code == 200, lower.text
    assert lower.json() == upper.json()


def test_market_segment_by_code_or_category_names_its_activities(api: httpx.Client) -> None:
    """A segment given as a code or a category names each subclass the release's catalog
    holds, as a segment given in words does."""
    categories = json.loads(CATEGORIES.read_text(encoding="utf-8"))["categorias"]
    slug, known = next(
        (slug, found[0])
        for slug, category in categories.items()
        for code in category["cnaes"]
        if len(code) == 7
        for found in [_data(api, "/search/cnae", query=code)]
        if found and found[0]["codigo"] == code
    )
    named = {"codigo": known["codigo"], "descricao": known["descricao"]}
    assert named["descricao"]
    by_code = api.get("/v1/mercado", params={"segmento": known["codigo"]})
    assert by_code.status_code == 200, by_code.text
    assert by_code.json()["segmento"]["cnaes"] == [named]
    by_category = api.get("/v1/mercado", params={"segmento": slug}).json()["segmento"]["cnaes"]
    assert named in by_category
