"""`indexer warm`: the API's own searches sent to the real Elasticsearch for a while."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import msgspec
import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from app.domain.summary import SOURCE_FIELDS
from app.lib.listing import BARE
from app.search import filters as f
from app.search.service import Etapa, Modo, build_query
from app.settings import get_settings
from indexer.cli import app
from indexer.warm import (
    FETCHES,
    WarmError,
    _being_typed,
    _reordered,
    _typo,
    ready,
    searches,
    seek_filters,
    warm,
)

runner = CliRunner()
SEARCHES = re.compile(r"s: ([\d,]+) searches, [\d,]+/s, took p50 \d+ ms, p95 \d+ ms$")


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["warm", *args, "--url", get_settings().elasticsearch_url])
    return result.exit_code, result.output


def _release(es: Elasticsearch, alias: str) -> None:
    """An empty index behind `alias`, named as a release so that the session deletes it."""
    index = f"{alias}-20260101000000000000"
    es.indices.create(index=index, aliases={alias: {}}, settings={"number_of_replicas": 0})


def test_warm_searches_the_alias_and_reports_each_interval(sample_alias: str) -> None:
    code, output = _invoke("--alias", sample_alias, "--seconds", "3", "--threads", "2")
    assert code == 0, output
    done = re.search(r"([\d,]+) searches on " + re.escape(sample_alias), output)
    assert done, output
    intervals = re.findall(r"(\d+) s: ([\d,]+) searches, [\d,]+/s, took p50 \d+ ms", output)
    assert intervals, output
    assert intervals[0][0] == "0", output
    total = int(done.group(1).replace(",", ""))
    assert total >= sum(int(n.replace(",", "")) for _, n in intervals) > 0


def test_warm_reports_every_interval_and_every_search(es: Elasticsearch, sample_alias: str) -> None:
    lines: list[str] = []
    total = warm(es, sample_alias, seconds=3.5, threads=2, every=1.0, report=lines.append)
    starts = [int(line.split(" s:")[0]) for line in lines]
    counted = [int(m.group(1).replace(",", "")) for m in map(SEARCHES.search, lines) if m]
    assert starts == [0, 1, 2, 3], lines
    assert len(counted) == 4, lines
    assert all(counted), lines
    assert sum(counted) == total


def test_the_searches_are_the_apis_own() -> None:
    document = {
        "razao_social": "PADARIA SAO JOAO LTDA",
        "nome_fantasia": "PANIFICADORA CENTRAL",
        "endereco": {"uf": "MG", "cep": "30110002", "municipio": {"codigo": "4123"}},
        "cnae_principal": {"codigo": "1091102"},
    }
    sent = list(searches(document, random.Random(1)))
    seek, _ = build_query(f.Filtros(uf="MG", cnae="10"), Modo.SEEK, Etapa.TOLERANTE)
    other, _ = build_query(seek_filters(document, random.Random(1)), Modo.SEEK, Etapa.TOLERANTE)
    as_typed, _ = build_query(f.Filtros(q="PANIFICADORA CENTRAL"), Modo.SEARCH, Etapa.EXATA)
    being_typed, _ = build_query(f.Filtros(q="PANIFICADORA CEN"), Modo.SEARCH, Etapa.EXATA)
    reordered, _ = build_query(f.Filtros(q="CENTRAL PANIFICADORA"), Modo.SEARCH, Etapa.EXATA)
    by_name, _ = build_query(
        f.Filtros(nome="PANIFICADORA CENTRAL", uf="MG"), Modo.NOME, Etapa.EXATA
    )
    queries = [body["query"] for body in sent]
    assert len(sent) == 8
    assert FETCHES == [BARE, {"source_includes": SOURCE_FIELDS}]  # with the store, without
    assert queries[:2] == [seek, other]
    assert as_typed in queries
    assert being_typed in queries
    assert reordered in queries
    assert by_name in queries
    with_facets = [body for body in sent if body["aggregations"]]
    assert {name for body in with_facets for name in body["aggregations"]} == set(f.FACETS)
    nameless = {"endereco": {"uf": "SP"}}
    assert [body["query"] for body in searches(nameless, random.Random(1))] == [
        build_query(f.Filtros(uf="SP", cnae="47"), Modo.SEEK, Etapa.TOLERANTE)[0],
        build_query(seek_filters(nameless, random.Random(1)), Modo.SEEK, Etapa.TOLERANTE)[0],
    ]
    abroad = {**document, "endereco": {"uf": "EX"}}
    assert len(list(searches(abroad, random.Random(1)))) == len(sent)
    garbled = {**document, "endereco": {"uf": "R"}}  # a value no UF filter takes
    for seed in range(20):  # the shapes with its UF are left out, the others sent
        kept = [str(body["query"]) for body in searches(garbled, random.Random(seed))]
        assert len(kept) in (len(sent) - 2, len(sent) - 3)
        assert not any("'R'" in query for query in kept)


def test_the_seek_filters_cover_each_kind_of_filter() -> None:
    """Over many draws the other `/seek` shape runs every kind of filter: the first word of the
    name within the UF, the CEP's prefix, the municipality, capital and opening-date ranges (the
    last with facets, whose aggregations are sent)."""
    document = {
        "razao_social": "PADARIA SAO JOAO LTDA",
        "endereco": {"uf": "BA", "cep": "40010000", "municipio": {"codigo": "3849"}},
        "cnae_principal": {"codigo": "1091102"},
    }
    rng = random.Random(5)
    drawn = [seek_filters(document, rng) for _ in range(200)]
    defaults = msgspec.structs.asdict(f.Filtros())
    assert {
        tuple(sorted(k for k, v in msgspec.structs.asdict(one).items() if v != defaults[k]))
        for one in drawn
    } == {
        ("nome", "uf"),
        ("cep", "situacao"),
        ("com_email", "municipio"),
        ("capital_max", "capital_min", "porte", "uf"),
        ("abertura_ate", "abertura_de", "cnae", "facets"),
    }
    assert f.Filtros(nome="padaria", uf="BA") in drawn
    assert f.Filtros(cep="40010", situacao="ativa") in drawn
    assert f.Filtros(municipio="3849", com_email=True) in drawn
    for seed in range(30):
        faceted = [body for body in searches(document, random.Random(seed)) if body["aggregations"]]
        assert faceted
    nameless = {"endereco": {"uf": "BA"}}
    assert all(one.nome is None for one in (seek_filters(nameless, rng) for _ in range(100)))


def test_a_name_being_typed_and_reordered() -> None:
    assert _being_typed("CASA DAS TINTAS PINHEIRO") == "CASA DAS TINTAS PIN"
    assert _being_typed("PINHEIRO") == "PINHEIRO"
    assert _being_typed("CASA BOA") == "CASA BOA"
    assert _being_typed("") == ""
    assert _reordered("CASA DAS TINTAS") == "TINTAS DAS CASA"
    assert _reordered("") == ""


def test_a_typo_swaps_two_adjacent_letters_of_the_longest_word() -> None:
    rng = random.Random(3)
    for _ in range(50):
        typed = _typo("CASA DAS TINTAS PINHEIRO", rng)
        words = typed.split()
        assert words[:3] == ["CASA", "DAS", "TINTAS"]
        assert sorted(words[3]) == sorted("PINHEIRO")
        assert words[3] != "PINHEIRO"
        changed = [i for i, (a, b) in enumerate(zip(words[3], "PINHEIRO", strict=True)) if a != b]
        assert len(changed) == 2
        assert changed[1] == changed[0] + 1
    assert _typo("", rng) == ""
    assert _typo("BAR", rng) == "BAR"


def test_warm_fails_cleanly_without_documents(
    es: Elasticsearch, new_alias: Callable[[], str]
) -> None:
    code, output = _invoke("--alias", "no-such-alias-here", "--seconds", "1")
    assert code == 1
    assert "warm-up failed: no index or alias no-such-alias-here" in output
    empty = new_alias()
    _release(es, empty)
    code, output = _invoke("--alias", empty, "--seconds", "1")
    assert code == 1
    assert f"warm-up failed: {empty} has no documents to search for" in output
    code, output = _invoke("--alias", empty, "--seconds", "0")
    assert code == 2
    assert "--seconds" in output


def test_warm_stops_at_a_search_elasticsearch_refuses(
    es: Elasticsearch, new_alias: Callable[[], str]
) -> None:
    alias = new_alias()  # an index of other shape: no `cnpj` to sort the hits by
    _release(es, alias)
    es.index(index=alias, document={"razao_social": "PADARIA BOA VISTA"}, refresh=True)
    code, output = _invoke("--alias", alias, "--seconds", "30")
    assert code == 1
    assert "warm-up failed: Elasticsearch refused a search" in output
    assert "cnpj" in output


def test_warm_waits_for_the_alias_to_be_searchable_then_gives_up(
    es: Elasticsearch, new_alias: Callable[[], str]
) -> None:
    alias = new_alias()  # its only shard may live on no node: it stays red
    index = f"{alias}-20260101000000000000"
    es.indices.create(
        index=index,
        aliases={alias: {}},
        settings={"number_of_replicas": 0, "routing.allocation.require._name": "no-such-node"},
        wait_for_active_shards="0",
    )
    try:
        with pytest.raises(
            WarmError, match=rf"^{alias} is not searchable after 1s \(status red\)$"
        ):
            ready(es, alias, wait="1s")
    finally:
        es.indices.delete(index=index)
