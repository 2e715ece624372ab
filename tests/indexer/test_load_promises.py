"""What `docs/indexer.md` promises about a load: a single zip or CSV loads on its own; `--shards`
sets the new index's primary shards; a reload counts the establishments that left the release;
a load interrupted half-way leaves the live release untouched and deletes what it created."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from app.domain.catalog import catalog_name
from app.settings import get_settings
from indexer import elastic
from indexer.load import Options, Progress, run
from tests.conftest import ROOT, Loader

SAMPLE = ROOT / "fixtures" / "sample"


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def test_load_single_csv_and_single_zip(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path, es: Elasticsearch
) -> None:
    establishments = SAMPLE / "ESTABELE.csv"
    single = load(establishments, new_alias())
    assert single.documents_written == _lines(establishments) - single.bad_rows > 0
    archive = tmp_path / "Estabelecimentos0.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.write(establishments, "K3241.K03200Y0.D61108.ESTABELE")
    zipped = load(archive, new_alias())
    assert zipped.documents_written == single.documents_written
    assert [f.kind for f in zipped.files] == ["estabelecimentos"]


def test_load_shards_option_sets_primary_shards(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch
) -> None:
    alias = new_alias()
    report = load(SAMPLE / "ESTABELE.csv", alias, shards=2)
    settings = es.indices.get_settings(index=report.index)[report.index]["settings"]["index"]
    assert settings["number_of_shards"] == "2"
    assert settings["blocks"]["write"] == "true"


def test_reload_counts_establishments_that_left(
    load: Loader, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    alias = new_alias()
    first = load(SAMPLE, alias)
    release = tmp_path / "smaller"
    shutil.copytree(SAMPLE, release)
    lines = (release / "ESTABELE.csv").read_bytes().splitlines(keepends=True)
    (release / "ESTABELE.csv").write_bytes(b"".join(lines[:-25]))
    second = load(release, alias)
    gone = first.documents_written - second.documents_written
    assert gone > 0
    assert second.removed == gone
    assert second.unchanged == second.documents_written
    assert second.changed == 0


class _Interrupt(Progress):
    """A caller that presses Ctrl-C once documents are being written."""

    def indexed(self, documents: int, errors: int) -> None:
        raise KeyboardInterrupt


def test_load_interrupted_half_way_leaves_live_release_and_cleans_up(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    alias = new_alias()
    live = load(SAMPLE, alias)
    before = {info.name for info in elastic.list_indices(es, alias)}
    options = Options(
        url=get_settings().elasticsearch_url,
        alias=alias,
        workers=1,
        bad_rows_file=tmp_path / "bad.csv",
    )
    with pytest.raises(KeyboardInterrupt):
        run(SAMPLE, es, options, _Interrupt())
    assert {info.name for info in elastic.list_indices(es, alias)} == before
    assert elastic.alias_targets(es, alias) == [live.index]
    assert elastic.alias_targets(es, catalog_name(alias)) == [catalog_name(live.index)]
    leftovers = es.indices.get(index=f"{alias}-*", expand_wildcards="all")
    assert set(leftovers) == {live.index, catalog_name(live.index)}
