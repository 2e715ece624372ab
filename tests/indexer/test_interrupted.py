"""A load that does not reach its end: killed with the whole machine's abruptness (SIGKILL to
its process group) it leaves the live release untouched and the next load of the alias deletes
what it left; stopped with SIGTERM while its builders write it deletes its own index before it
exits, and no builder writes (re-creating it) afterwards; a terminal's Ctrl-C (SIGINT to the
whole process group) does the same with one line of output. One load of an alias at a time."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from elasticsearch import Elasticsearch

from indexer import elastic
from indexer import load as loading
from indexer.load import alias_lock
from tests.conftest import ROOT, SAMPLE, Loader
from tests.indexer.receita_server import ReceitaServer

INDEXER = ROOT / ".venv" / "bin" / "indexer"


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated month large enough (30,000 establishments) to be interrupted mid-load."""
    folder = tmp_path_factory.mktemp("interrupted") / "2026-10"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_month.py"), str(folder),
         "--establishments", "30000", "--parts", "2", "--seed", "3"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return folder


def _start_load(
    alias: str, release: Path, workdir: Path, output: int | IO[bytes] = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(INDEXER), "load", str(release), "--alias", alias,
         "--records-dir", str(workdir / "registros"), "--bad-rows", str(workdir / "bad.csv"),
         "--workdir", str(workdir / "staging")],
        stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


def _wait_unfinished(es: Elasticsearch, alias: str, process: subprocess.Popen[bytes]) -> str:
    """The index the running load is writing, once it exists."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = elastic.unfinished(es, alias)
        if found:
            return found[0]
        assert process.poll() is None, "the load ended before it could be interrupted"
        time.sleep(0.05)
    raise AssertionError("the load never created its index")


def _wait_writing(es: Elasticsearch, index: str, process: subprocess.Popen[bytes]) -> None:
    """Returns once builders have sent documents into `index` (counted before any refresh)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        stats = es.indices.stats(index=index, metric="indexing")
        if stats["_all"]["primaries"].get("indexing", {}).get("index_total", 0) > 0:
            return
        assert process.poll() is None, "the load ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError("the load never wrote a document")


def test_load_killed_leaves_live_release_and_next_load_cleans_up(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, month: Path, tmp_path: Path
) -> None:
    alias = new_alias()
    load(SAMPLE, alias)
    [live] = elastic.alias_targets(es, alias)
    before = elastic.count(es, alias)
    with _start_load(alias, month, tmp_path) as process:
        leftover = _wait_unfinished(es, alias, process)
        _wait_writing(es, leftover, process)
        os.killpg(process.pid, signal.SIGKILL)
    assert elastic.alias_targets(es, alias) == [live]
    assert elastic.count(es, alias) == before
    assert elastic.unfinished(es, alias) == [leftover]
    [staged] = (tmp_path / "staging").iterdir()  # the month's rows, staged: left on disk

    report = load(SAMPLE, alias, workdir=tmp_path / "staging")
    assert report.staging_removed == [str(staged)]
    assert list((tmp_path / "staging").iterdir()) == []  # and this load's own, removed at its end
    assert report.cleaned_up == [leftover]
    assert not es.indices.exists(index=leftover)
    assert report.live
    assert elastic.alias_targets(es, alias) == [report.index]
    assert elastic.unfinished(es, alias) == []


def test_load_terminated_deletes_its_own_index(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, month: Path, tmp_path: Path
) -> None:
    alias = new_alias()
    load(SAMPLE, alias)
    [live] = elastic.alias_targets(es, alias)
    with _start_load(alias, month, tmp_path) as process:
        index = _wait_unfinished(es, alias, process)
        _wait_writing(es, index, process)
        process.send_signal(signal.SIGTERM)  # the load's process only, as `kill PID` does
        assert process.wait(timeout=60) != 0
    time.sleep(2)  # no builder left to write (and so re-create the index) after it exits
    assert not es.indices.exists(index=index)
    assert elastic.unfinished(es, alias) == []
    assert elastic.alias_targets(es, alias) == [live]


@pytest.mark.parametrize("moment", ["builders starting", "builders writing"])
def test_ctrl_c_stops_the_load_cleanly(
    load: Loader,
    new_alias: Callable[[], str],
    es: Elasticsearch,
    month: Path,
    tmp_path: Path,
    moment: str,
) -> None:
    """Ctrl-C at a terminal reaches the load and every reader and builder process: the load
    says in one line that it stopped, no process prints a traceback, none is left running, and
    neither the index nor the record store it was writing stays behind."""
    alias = new_alias()
    load(SAMPLE, alias)
    [live] = elastic.alias_targets(es, alias)
    log = tmp_path / "load.log"
    with log.open("wb") as output, _start_load(alias, month, tmp_path, output) as process:
        index = _wait_unfinished(es, alias, process)
        if moment == "builders writing":
            _wait_writing(es, index, process)
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(0.1)  # pressed twice: the second must not cut the clean-up short
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=60) == 128 + signal.SIGINT
    _assert_stopped_cleanly(
        es, alias, live, index, process, log.read_text(), "load", tmp_path / "registros"
    )


def _assert_stopped_cleanly(
    es: Elasticsearch,
    alias: str,
    live: str,
    index: str,
    process: subprocess.Popen[bytes],
    output: str,
    command: str,
    records: Path,
) -> None:
    """One line of output and no traceback; no process of the command left; neither the index
    it was writing nor a record store left; the alias serving the release it served."""
    time.sleep(2)  # no builder left to write after the command exits
    assert f"{command} stopped (SIGINT)" in output
    assert "Traceback" not in output, output
    assert "Error" not in output, output
    left = subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True, text=True)
    assert left.stdout == ""
    assert not es.indices.exists(index=index)
    assert elastic.unfinished(es, alias) == []
    assert elastic.alias_targets(es, alias) == [live]
    # no store nor pointer left; the alias's lock file stays, as lock files do (it holds nothing)
    assert [path.name for path in records.iterdir()] == [f"cnpj-indexer-{alias}.lock"]


def test_ctrl_c_stops_an_update_s_load_cleanly(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, month: Path, tmp_path: Path
) -> None:
    """`update` loads the month it downloaded the same way, and stops the same way."""
    alias = new_alias()
    load(SAMPLE, alias)
    [live] = elastic.alias_targets(es, alias)
    server = ReceitaServer({"2026-10": {path.name: path.read_bytes() for path in month.iterdir()}})
    log = tmp_path / "update.log"
    try:
        with log.open("wb") as output, subprocess.Popen(
            [str(INDEXER), "update", str(tmp_path / "downloads"), "--source", server.url,
             "--regimes-source", "", "--alias", alias,
             "--records-dir", str(tmp_path / "registros")],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        ) as process:  # fmt: skip
            index = _wait_unfinished(es, alias, process)
            _wait_writing(es, index, process)
            os.killpg(process.pid, signal.SIGINT)
            assert process.wait(timeout=60) == 128 + signal.SIGINT
    finally:
        server.stop()
    _assert_stopped_cleanly(
        es, alias, live, index, process, log.read_text(), "update", tmp_path / "registros"
    )


def test_a_stop_after_the_swap_keeps_the_release_it_made_live(
    load: Loader,
    new_alias: Callable[[], str],
    es: Elasticsearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stopped while the release is recorded for the monitors (after the alias swap), the load
    keeps the release it made live: deleting it would leave the alias with none."""

    def interrupted(database: str, alias: str, index: str) -> str | None:
        raise KeyboardInterrupt

    alias = new_alias()
    load(SAMPLE, alias)
    monkeypatch.setattr(loading, "record_release", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load(SAMPLE, alias)
    [live] = elastic.alias_targets(es, alias)
    assert elastic.count(es, alias) > 0
    assert elastic.unfinished(es, alias) == []
    assert len(elastic.list_indices(es, alias)) == 2
    assert live == elastic.list_indices(es, alias)[0].name  # the newest


def test_second_load_of_an_alias_refused_while_one_runs(tmp_path: Path) -> None:
    with (
        alias_lock("some-alias", tmp_path),
        pytest.raises(elastic.LoadError, match="another"),
        alias_lock("some-alias", tmp_path),
    ):
        pass
    with alias_lock("some-alias", tmp_path):  # released: the next one goes
        pass
