"""The indexer against the real Elasticsearch."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from app.domain.catalog import catalog_name
from app.domain.text import digits
from indexer import elastic, staging
from indexer import load as load_module
from indexer.load import BUCKET_MEMORY, builder_memory
from indexer.staging import BUCKET_ROWS
from tests.conftest import PEER_DATA, RECEITA_SAMPLE, ROOT, SERPRO, Loader, Server, stored

NewAlias = Callable[[], str]


def _found(es: Elasticsearch, alias: str, number: str) -> dict[str, Any]:
    document = stored(es, alias, number)
    assert document is not None, f"{number} is not in {alias}"
    return document


def _peer_copy(tmp_path: Path, nome_fantasia: str | None = None) -> Path:
    """The peer release, optionally with SERPRO's trade name changed."""
    release = tmp_path / "release"
    shutil.copytree(PEER_DATA, release)
    if nome_fantasia is not None:
        zipped = release / "Estabelecimentos0.zip"
        with zipfile.ZipFile(zipped) as archive:
            raw = archive.read("Estabelecimentos0").decode("latin-1")
        rows = list(csv.reader(io.StringIO(raw), delimiter=";"))
        rows = [row for row in rows if row]
        rows[0][4] = nome_fantasia
        zipped.unlink()
        out = io.StringIO()
        csv.writer(out, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
        (release / "Estabelecimentos0").write_bytes(out.getvalue().encode("latin-1"))
    return release


def test_load_peer_release_one_document_live(
    es: Elasticsearch, load: Loader, new_alias: NewAlias
) -> None:
    alias = new_alias()
    report = load(PEER_DATA, alias)
    assert report.live
    assert report.documents_written == 1 == report.establishments == report.new
    assert report.bad_rows == 0
    assert {f.kind for f in report.files} >= {"estabelecimentos", "empresas", "socios", "simples"}
    assert sum(f.rows for f in report.files if f.kind == "socios") == 7
    # The four tax-regime files (one row each) are read by their header, whatever their names
    # and sub-folders; the files that are not Receita's are listed as ignored.
    regimes = sorted(f.file.split(":")[0] for f in report.files if f.kind == "regimes")
    assert regimes == sorted(
        f"{name}.zip" for name in ("Imunes e Isentas", "Lucro Arbitrado", "Lucro Presumido",
                                   "Lucro Real")
    )  # fmt: skip
    assert sum(f.rows for f in report.files if f.kind == "regimes") == 4
    # Each regime row whose company has no establishment here is counted (not loaded).
    with zipfile.ZipFile(PEER_DATA / "Estabelecimentos0.zip") as archive:
        [member] = archive.namelist()
        roots = {row[0] for row in csv.reader(io.StringIO(archive.read(member).decode("latin-1")),
                                              delimiter=";") if row}  # fmt: skip
    elsewhere = 0
    for name in ("Imunes e Isentas", "Lucro Arbitrado", "Lucro Presumido", "Lucro Real"):
        with zipfile.ZipFile(PEER_DATA / f"{name}.zip") as archive:
            [member] = archive.namelist()
            rows = list(csv.DictReader(io.StringIO(archive.read(member).decode("utf-8"))))
        elsewhere += sum(1 for row in rows if digits(row["cnpj"])[:8] not in roots)
    assert elsewhere > 0
    assert report.regimes_without_company == elsewhere
    # So is each row of the companies, partners and Simples files whose company has none.
    without = {}
    for kind, pattern in (("empresas", "Empresas*.zip"), ("socios", "Socios*.zip"),
                          ("simples", "Simples.zip")):  # fmt: skip
        for part in sorted(PEER_DATA.glob(pattern)):
            with zipfile.ZipFile(part) as archive:
                [member] = archive.namelist()
                text = archive.read(member).decode("latin-1")
            rows = [row for row in csv.reader(io.StringIO(text), delimiter=";") if row]
            without[kind] = without.get(kind, 0) + sum(1 for row in rows if row[0] not in roots)
    assert without["socios"] > 0
    assert report.rows_without_establishment == {k: n for k, n in without.items() if n}
    assert sorted(f.file for f in report.ignored_files) == [
        "PROVENANCE.txt", "response.json", "tabmun.csv", "updated_at.txt",
    ]  # fmt: skip
    assert elastic.alias_targets(es, alias) == [report.index]
    assert _found(es, alias, SERPRO)["razao_social"].startswith("SERVICO FEDERAL")


def test_load_same_release_twice_zero_changed(
    es: Elasticsearch, load: Loader, new_alias: NewAlias
) -> None:
    alias = new_alias()
    first = load(PEER_DATA, alias)
    second = load(PEER_DATA, alias)
    assert second.previous_index == first.index
    assert (second.new, second.changed, second.unchanged, second.removed) == (0, 0, 1, 0)
    assert elastic.alias_targets(es, alias) == [second.index]
    assert es.indices.exists(index=first.index), "the previous index is kept for rollback"


def test_load_changed_record_counted_as_changed(
    load: Loader, new_alias: NewAlias, tmp_path: Path
) -> None:
    alias = new_alias()
    load(PEER_DATA, alias)
    report = load(_peer_copy(tmp_path, nome_fantasia="SERPRO BRASILIA"), alias)
    assert (report.new, report.changed, report.unchanged) == (0, 1, 0)


def test_load_malformed_file_bad_rows_reported_rest_loaded(
    es: Elasticsearch, load: Loader, new_alias: NewAlias, tmp_path: Path
) -> None:
    release = tmp_path / "dirty"
    shutil.copytree(RECEITA_SAMPLE, release)
    fields = ["11222333", "0001", "81", "1", "LOJA BOA", "02", "20200101", "00", "", "",
              "20200101", "4781400", "", "RUA", "A", "1", "", "CENTRO", "01001000", "SP", "7107",
              *[""] * 9]  # fmt: skip
    good = ";".join(f'"{value}"' for value in fields)
    shifted_fields = ["11222334", "0001", "26", "1", "LOJA", "RUIM", *fields[5:]]
    shifted = ";".join(f'"{value}"' for value in shifted_fields)
    nul = good.replace("LOJA BOA", "LOJA\x00 NUL").replace("11222333", "11222335")
    nul = nul.replace('"81"', '"70"')
    (release / "Estabelecimentos9.csv").write_bytes(
        "\n".join([good, shifted, "", nul, "lixo sem aspas", ""]).encode("latin-1")
    )  # fmt: skip
    report = load(release, alias := new_alias())
    assert report.live
    assert report.bad_rows_by_reason == {"invalid CNPJ": 6, "wrong number of columns": 2}
    extra = next(f for f in report.files if f.file == "Estabelecimentos9.csv")
    assert (extra.rows, extra.bad_rows) == (2, 2)
    assert report.documents_written == 2000 + 2 == es.count(index=alias)["count"]
    assert _found(es, alias, "11222335000170")["nome_fantasia"] == "LOJA NUL"
    assert report.bad_rows_file is not None
    with open(report.bad_rows_file, encoding="utf-8") as stream:
        listed = list(csv.DictReader(stream))
    assert len(listed) == 8
    assert {(r["file"], r["line"]) for r in listed if r["file"] == "Estabelecimentos9.csv"} == {
        ("Estabelecimentos9.csv", "2"),
        ("Estabelecimentos9.csv", "5"),
    }
    assert sum(1 for r in listed if r["file"] == "ESTABELE.csv" and "99000" in r["detail"]) == 6


def test_alias_swap_previous_index_served_until_switch(
    es: Elasticsearch, load: Loader, new_alias: NewAlias, tmp_path: Path
) -> None:
    alias = new_alias()
    old = load(PEER_DATA, alias)
    staged = load(_peer_copy(tmp_path, nome_fantasia="SERPRO NOVO"), alias, swap=False)
    assert not staged.live
    assert elastic.alias_targets(es, alias) == [old.index]
    server = Server(alias)
    try:
        with server.client() as api:

            def trade_name() -> str:
                response = api.get(f"/v1/cnpj/{SERPRO}")
                assert response.status_code == 200
                name: str = response.json()["nome_fantasia"]
                return name

            catalog = catalog_name(alias)
            assert trade_name() == "REGIONAL BRASILIA-DF"
            assert elastic.alias_targets(es, catalog) == [catalog_name(old.index)]
            assert elastic.swap_alias(es, alias, staged.index) == [old.index]
            assert trade_name() == "SERPRO NOVO"
            assert elastic.alias_targets(es, catalog) == [catalog_name(staged.index)]
            assert elastic.rollback(es, alias) == (staged.index, old.index)
            assert trade_name() == "REGIONAL BRASILIA-DF"
            assert elastic.alias_targets(es, catalog) == [catalog_name(old.index)]
    finally:
        server.stop()


def test_drop_old_keeps_newest_and_live(
    es: Elasticsearch, load: Loader, new_alias: NewAlias
) -> None:
    alias = new_alias()
    reports = [load(PEER_DATA, alias) for _ in range(3)]
    assert [i.name for i in elastic.list_indices(es, alias)] == [r.index for r in reversed(reports)]
    assert elastic.drop_old(es, alias, keep=1) == [reports[1].index, reports[0].index]
    assert [i.name for i in elastic.list_indices(es, alias)] == [reports[2].index]
    remaining = es.indices.get(index=f"{alias}-*").body
    assert sorted(remaining) == [reports[2].index, catalog_name(reports[2].index)]


def test_load_worker_processes_same_documents_as_inline(
    es: Elasticsearch, load: Loader, new_alias: NewAlias
) -> None:
    inline = load(RECEITA_SAMPLE, alias_a := new_alias(), workers=1)
    pooled = load(RECEITA_SAMPLE, alias_b := new_alias(), workers=2, bucket_rows=300)
    assert inline.documents_written == pooled.documents_written == 2000

    def hashes(alias: str) -> dict[str, str]:
        hits = es.search(index=alias, size=2000, source=["cnpj", "hash"])["hits"]["hits"]
        return {hit["_source"]["cnpj"]: hit["_source"]["hash"] for hit in hits}

    assert hashes(alias_a) == hashes(alias_b)
    assert pooled.missing_reference_codes == inline.missing_reference_codes


def test_load_duplicate_cnpj_counted_one_document_kept(
    es: Elasticsearch, load: Loader, new_alias: NewAlias, tmp_path: Path
) -> None:
    release = _peer_copy(tmp_path, nome_fantasia="SERPRO DUPLICADA")
    shutil.copy(PEER_DATA / "Estabelecimentos0.zip", release / "Estabelecimentos1.zip")
    report = load(release, alias := new_alias())
    assert report.establishments == 2
    assert (report.documents_written, report.duplicates) == (1, 1)
    assert report.bad_rows_by_reason == {"duplicate CNPJ (one of the rows was kept)": 1}
    kept = _found(es, alias, SERPRO)["nome_fantasia"]
    assert kept in {"SERPRO DUPLICADA", "REGIONAL BRASILIA-DF"}


def test_a_repeated_company_root_joins_once_and_is_counted(
    es: Elasticsearch, load: Loader, new_alias: NewAlias, tmp_path: Path
) -> None:
    """A company (or Simples) row given again for its root is counted as a bad row, and each
    establishment is joined with one of them: not once per copy (a root given k times with k
    establishments would make k * k rows)."""
    release = tmp_path / "repeated"
    shutil.copytree(PEER_DATA, release)
    copies = [f'"33683111";"SERPRO COPIA {n}";"2011";"16";"1,00";"05";""' for n in (1, 2)]
    (release / "Empresas2.csv").write_text("\n".join(copies) + "\n", encoding="latin-1")
    (release / "Simples2.csv").write_text(
        '"33683111";"N";"20140101";"20150101";"N";"00000000";"00000000"\n', encoding="latin-1"
    )
    report = load(release, alias := new_alias())
    assert report.live
    assert (report.establishments, report.documents_written, report.duplicates) == (1, 1, 0)
    assert report.bad_rows_by_reason == {"repeated company root (one of the rows was kept)": 3}
    # the greatest row is kept, so a reload of the same files keeps the same one
    assert _found(es, alias, SERPRO)["razao_social"] == (
        "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)"
    )


def test_published_release_is_merged_into_one_segment(
    es: Elasticsearch, new_alias: NewAlias
) -> None:
    """Publishing a release leaves its index in one segment (every clause of a query runs once
    per segment), written once and blocked for writes."""
    index = f"{new_alias()}-segments"
    serving = {"settings": {"index": {"refresh_interval": "1s", "number_of_replicas": 0}}}
    es.indices.create(index=index, settings={"number_of_shards": 1, "number_of_replicas": 0})
    try:
        for number in range(3):  # each refresh writes a segment of its own
            es.index(index=index, document={"n": number}, refresh=True)

        def segments() -> int:
            shards = es.indices.segments(index=index)["indices"][index]["shards"]
            return sum(copy["num_search_segments"] for copies in shards.values() for copy in copies)

        assert segments() == 3
        elastic.restore_settings(es, index, serving)
        assert segments() == 1
        assert elastic.count(es, index) == 3
    finally:
        es.indices.delete(index=index)


def _merge_settings(es: Elasticsearch, index: str) -> dict[str, Any]:
    found = es.indices.get_settings(index=index, name="index.merge.*").body
    return dict(found.get(index, {}).get("settings", {}).get("index", {}).get("merge", {}))


def test_a_load_merges_nothing_until_it_publishes(es: Elasticsearch, new_alias: NewAlias) -> None:
    """While the documents arrive, the flushed segments stay unmerged (publishing merges them
    into one in a single pass, where the default policy, past ten segments, would rewrite them
    in throttled merges first); publishing gives the index the default policy back."""
    index = f"{new_alias()}-unmerged"
    mapping = {"settings": {"index": {"refresh_interval": "1s", "number_of_replicas": 0}}}
    elastic.create_index(es, index, {**mapping, "mappings": {}}, shards=1)
    try:
        assert _merge_settings(es, index) == {
            "policy": {"segments_per_tier": "100", "max_merge_at_once": "100"},
            "scheduler": {"auto_throttle": "false"},
        }
        flushed = 15  # more than the default policy's ten a tier
        for number in range(flushed):
            es.index(index=index, document={"n": number}, refresh=True)
        deadline = time.monotonic() + 3  # a merge the default policy starts shows up at once
        while time.monotonic() < deadline:
            stats = es.indices.stats(index=index, metric="merge")["_all"]["primaries"]["merges"]
            assert stats["total"] + stats["current"] == 0
            time.sleep(0.2)
        elastic.restore_settings(es, index, mapping)
        assert _merge_settings(es, index) == {}
        merges = es.indices.stats(index=index, metric="merge")["_all"]["primaries"]["merges"]
        assert merges["total"] == 1  # the publishing merge, all segments in one pass
        assert elastic.count(es, index) == flushed
    finally:
        es.indices.delete(index=index)


@pytest.mark.parametrize(
    ("limit", "workers", "bucket_rows", "expected"),
    [
        ("384MB", 2, 25_000, 64),  # the defaults: a bucket's need, not the 192 MB share
        ("4GB", 2, 25_000, 64),  # a larger limit buys no cache a later bucket reads
        ("384MB", 2, 50_000, 128),  # twice the rows a bucket, twice the need
        ("384MB", 2, 100_000, 192),  # never past the builder's share of the limit
        ("64MB", 4, 25_000, 64),  # nor under the least DuckDB runs in
    ],
)
def test_a_builder_takes_what_a_bucket_needs_within_its_share(
    limit: str, workers: int, bucket_rows: int, expected: int
) -> None:
    assert builder_memory(limit, workers, bucket_rows) == expected


@pytest.fixture(scope="module")
def bucket_month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated month (the benchmarks' data) of one bucket of the default size."""
    month = tmp_path_factory.mktemp("bucket") / "2026-10"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_month.py"), str(month),
         "--establishments", str(BUCKET_ROWS), "--parts", "1", "--seed", "3"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return month


def test_a_bucket_of_25000_generated_establishments_is_built_within_the_bucket_memory(
    bucket_month: Path, load: Loader, new_alias: NewAlias, es: Elasticsearch
) -> None:
    """The generated month in one bucket of the default size, joined by a builder whose DuckDB
    has `BUCKET_MEMORY`: the join fits, and every establishment is indexed."""
    assert builder_memory("384MB", 1, BUCKET_ROWS) == BUCKET_MEMORY
    alias = new_alias()
    report = load(bucket_month, alias, workers=1, memory_limit="384MB", bucket_rows=BUCKET_ROWS)
    assert report.establishments == BUCKET_ROWS
    assert (report.documents_written, report.rejected) == (BUCKET_ROWS, 0)
    assert report.buckets_given_more_memory == 0
    assert elastic.count(es, alias) == BUCKET_ROWS


def test_a_bucket_whose_join_does_not_fit_is_joined_again_within_the_builders_share(
    bucket_month: Path,
    load: Loader,
    new_alias: NewAlias,
    es: Elasticsearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bucket that needs more than `builder_memory` gives (a real month's bucket may: one
    company's establishments make it bigger than `--bucket-rows`), here a builder given 32 MB
    for the join that takes 48: the join runs again under the builder's share of
    `--memory-limit`, every establishment is indexed, and the report counts the bucket."""
    monkeypatch.setattr(load_module, "MIN_MEMORY", 16)
    monkeypatch.setattr(load_module, "BUCKET_MEMORY", 32)
    assert builder_memory("384MB", 1, BUCKET_ROWS) == 32
    alias = new_alias()
    report = load(bucket_month, alias, workers=1, memory_limit="384MB", bucket_rows=BUCKET_ROWS)
    assert report.buckets_given_more_memory == 1
    assert (report.documents_written, report.rejected) == (BUCKET_ROWS, 0)
    assert elastic.count(es, alias) == BUCKET_ROWS


def test_partners_past_the_cap_of_one_company_are_counted_not_joined(
    es: Elasticsearch,
    load: Loader,
    new_alias: NewAlias,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """One company of millions of partner rows would make one record of gigabytes: the first
    partners in the release's order are joined, the rest counted as bad rows."""
    monkeypatch.setattr(staging, "MAX_PARTNERS", 2)  # read at each join: inline builders only
    with zipfile.ZipFile(PEER_DATA / "Socios0.zip") as archive:
        [member] = archive.namelist()
        text = archive.read(member).decode("latin-1")
    rows = csv.reader(io.StringIO(text), delimiter=";")
    names = [row[2] for row in rows if row[:1] == [SERPRO[:8]]]
    assert len(names) > 2
    release = tmp_path / "release"
    shutil.copytree(PEER_DATA, release)
    orphan = '"11111111";"2";"SOCIO {}";"***123456**";"49";"20200101";"";"";"";"00";"5"\n'
    (release / "Socios9.csv").write_text("".join(orphan.format(n) for n in range(5)))
    report = load(release, alias := new_alias(), workers=1)
    assert report.bad_rows_by_reason == {
        "more than 2 partners of one company (the rest not loaded)": len(names) - 2
    }  # a company with no establishment here joins none of its partners: not counted as over
    assert [partner["nome"] for partner in _found(es, alias, SERPRO)["socios"]] == names[:2]
