"""A release folder with something wrong in it goes live whole or not at all: a shifted first
row costs one bad row, not its file; a file named as part of the month that does not read as it
stops the load; a zip extracted beside itself is read once; a reference code that is not one is
a bad row; and what a killed load left is never rolled back to nor counted as a release."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from indexer import elastic, readjob
from indexer import load as loading
from indexer.reader import BadRow, read_rows
from indexer.sources import Kind, Source
from indexer.staging import megabytes
from tests.conftest import PEER_DATA, SAMPLE, SERPRO, Loader, stored


def _copy(source: Path, tmp_path: Path) -> Path:
    release = tmp_path / "release"
    shutil.copytree(source, release)
    return release


def test_a_shifted_first_row_costs_a_bad_row_not_the_file(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    release = _copy(SAMPLE, tmp_path)
    companies = release / "EMPRECSV.csv"
    rows = companies.read_bytes()
    companies.write_bytes(b'"11111111";"DESLOCADA";"2062";"49";"1,00";"01";"";"x"\n' + rows)
    report = load(release, new_alias())
    [read] = [f for f in report.files if f.kind == "empresas"]
    assert (read.rows, read.bad_rows) == (rows.count(b"\n"), 1)
    assert report.live


def test_a_file_named_as_the_month_that_does_not_read_as_it_stops_the_load(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    alias = new_alias()
    first = load(SAMPLE, alias)
    release = _copy(SAMPLE, tmp_path)
    (release / "Socios0.zip.md5").write_text("9e107d9d372bb6826bd81d3542a419d6  Socios0.zip\n")
    checked = load(release, alias)  # a checksum named like a kind is no part of the month
    assert ("Socios0.zip.md5", "not a CSV file, though named like socios") in [
        (i.file, i.reason) for i in checked.ignored_files
    ]
    (release / "Empresas9.csv").write_bytes(b'"a";"b";"c"\n' * 30)
    with pytest.raises(elastic.LoadError, match="named as part of the month"):
        load(release, alias)
    assert elastic.alias_targets(es, alias) == [checked.index]
    assert checked.index != first.index


def test_a_zip_extracted_beside_itself_is_read_once(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    release = _copy(PEER_DATA, tmp_path)
    with zipfile.ZipFile(release / "Socios0.zip") as archive:
        [member] = archive.namelist()
        archive.extract(member, release)
    alias = new_alias()
    report = load(release, alias)
    assert [f.file for f in report.files if f.kind == "socios"] == [f"Socios0.zip:{member}"]
    assert any(i.file == member and "same file" in i.reason for i in report.ignored_files)
    record = stored(es, alias, SERPRO)
    assert record is not None
    assert len(record["socios"]) == 6


def test_a_reference_code_that_is_not_one_is_a_bad_row(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    release = _copy(SAMPLE, tmp_path)
    with (release / "NATJUCSV.csv").open("ab") as table:
        table.write(b'"' + b"9" * 600 + b'";"NATUREZA DE CODIGO LONGO"\n')
    report = load(release, new_alias())
    [natures] = [f for f in report.files if f.kind == "naturezas"]
    assert natures.bad_rows == 1
    assert report.live


def test_a_reference_code_named_again_otherwise_keeps_its_first_name(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    """Two files disagreeing on a code's name (a second municipality table) is a bad row, not
    a reason to take the last one; the same name again is no disagreement."""
    release = _copy(SAMPLE, tmp_path)
    (release / "MUNICCSV2.csv").write_bytes(b'"7107";"OUTRA CIDADE"\n"7107";"SAO PAULO"\n')
    report = load(release, alias := new_alias())
    [again] = [f for f in report.files if f.file == "MUNICCSV2.csv"]
    assert (again.rows, again.bad_rows) == (1, 1)
    assert report.bad_rows_by_reason["code named again, otherwise"] == 1
    record = stored(es, alias, "44442947000128")
    assert record is not None
    assert record["endereco"]["municipio"]["nome"] == "SAO PAULO"


def test_what_a_killed_load_left_is_not_a_release(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch
) -> None:
    alias = new_alias()
    old, new = load(SAMPLE, alias).index, load(SAMPLE, alias).index
    prefix, stamp = old.rsplit("-", 1)
    # Between the two: a load's index with the serving settings, killed before its stamp; and
    # one made before loads stamped their indices, which is a release.
    killed, legacy = (f"{prefix}-{int(stamp) + n:020d}" for n in (2, 1))
    es.indices.create(index=killed, mappings={"_meta": {elastic.LOADING: True}})
    es.indices.create(index=legacy, mappings={"_meta": {"release_month": "2026-10"}})
    try:
        assert elastic.unfinished(es, alias) == [killed]
        assert elastic.drop_old(es, alias, keep=3) == []  # it takes no release's place
        assert elastic.rollback(es, alias) == (new, legacy)  # nor is it rolled back to
        assert es.indices.exists(index=killed)  # the next load deletes it
        assert elastic.rollback(es, alias) == (legacy, old)
    finally:
        es.indices.delete(index=[killed, legacy], ignore_unavailable=True)


@pytest.mark.parametrize("value", ["1KB", "63MB", "2TB", "\u0663MB"])
def test_a_memory_limit_out_of_range_is_refused_before_work(value: str) -> None:
    with pytest.raises(ValueError, match="memory size"):
        megabytes(value)
    assert megabytes("64MB") == 64


def test_a_zip_of_a_thousand_members_is_not_opened_one_by_one(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    release = _copy(SAMPLE, tmp_path)
    with zipfile.ZipFile(release / "Notas.zip", "w") as archive:
        for number in range(1001):
            archive.writestr(f"nota-{number}.txt", "x")
    with pytest.raises(elastic.LoadError, match="1,001 members"):
        load(release, new_alias())


def test_bad_rows_past_the_listed_ones_are_counted_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readjob, "MAX_LISTED", 5)
    junk = tmp_path / "Empresas0"
    junk.write_bytes(b";\n" * 40)
    job = readjob.ReadJob(Source(junk, None), Kind.EMPRESAS, 0, tmp_path)
    result = readjob.read_file(job)
    listed = job.bad_rows.read_text().splitlines()
    assert result.bad == 40
    assert len(listed) == 6
    assert readjob.UNLISTED in listed[-1]


def test_a_line_too_long_is_a_bad_row_read_in_bounded_pieces() -> None:
    first, second = (SAMPLE / "EMPRECSV.csv").read_bytes().splitlines(keepends=True)[:2]
    data = first + b'"1";"' + b"A" * 300_000 + b'"\n' + second
    rows = list(read_rows(io.BytesIO(data), "Empresas0", Kind.EMPRESAS))
    assert [(row.line, type(row).__name__) for row in rows] == [
        (1, "Row"), (2, "BadRow"), (3, "Row"),
    ]  # fmt: skip
    assert isinstance(rows[1], BadRow)
    assert rows[1].reason == "line too long"


def test_a_quote_left_open_counts_every_line_it_swallows() -> None:
    lines = (SAMPLE / "EMPRECSV.csv").read_bytes().splitlines(keepends=True)[:4]
    lines[1] = b'"41292831";"RAMIRO ROBERTO\n'  # a row cut inside a quoted name
    rows = list(read_rows(io.BytesIO(b"".join(lines)), "Empresas0", Kind.EMPRESAS))
    assert [(row.line, getattr(row, "reason", "")) for row in rows] == [
        (1, ""), (2, "unbalanced quote"), (3, "unbalanced quote"), (4, ""),
    ]  # fmt: skip


def test_a_reference_table_too_long_to_be_receitas_stops_the_load(
    load: Loader, new_alias: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "MAX_REFERENCE_ROWS", 10)  # the sample's tables are longer
    with pytest.raises(elastic.LoadError, match="more than 10 rows"):
        load(SAMPLE, new_alias())
