"""The `indexer` command line, end to end against the real Elasticsearch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from app.settings import get_settings
from indexer.cli import app
from tests.conftest import PEER_DATA, SERPRO, stored

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--url", get_settings().elasticsearch_url])
    return result.exit_code, result.output


def test_cli_load_report_indices_rollback_drop(
    es: Elasticsearch, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    alias = new_alias()
    report_path = tmp_path / "report.json"
    code, output = _invoke(
        "load", str(PEER_DATA), "--alias", alias, "--report", str(report_path),
        "--bad-rows", str(tmp_path / "bad.csv"),
    )  # fmt: skip
    assert code == 0, output
    assert "1 documents written" in output
    report = json.loads(report_path.read_text())
    assert report["documents_written"] == 1
    assert report["live"] is True
    code, output = _invoke("rollback", "--alias", alias)
    assert code == 1
    assert "no release older" in output
    code, _ = _invoke("load", str(PEER_DATA), "--alias", alias)
    assert code == 0
    code, output = _invoke("indices", "--alias", alias)
    assert code == 0
    assert output.count(alias + "-") == 3  # two rows and the alias line
    code, output = _invoke("rollback", "--alias", alias)
    assert code == 0
    assert es.indices.get_alias(name=alias).body.keys() == {report["index"]}
    code, output = _invoke("drop", "--alias", alias, "--keep", "1")
    assert code == 0
    assert stored(es, alias, SERPRO) is not None


def test_cli_load_missing_path_fails_cleanly(tmp_path: Path) -> None:
    code, output = _invoke("load", str(tmp_path / "nothing-here"))
    assert code == 2
    assert "does not exist" in output


def test_cli_load_bad_memory_limit_fails_cleanly(new_alias: Callable[[], str]) -> None:
    code, output = _invoke("load", str(PEER_DATA), "--alias", new_alias(), "--memory-limit", "lots")
    assert code == 1
    assert "invalid memory size" in output


def test_cli_load_elasticsearch_unreachable_fails_cleanly() -> None:
    result = runner.invoke(app, ["load", str(PEER_DATA), "--url", "http://127.0.0.1:1"])
    assert result.exit_code == 1
    assert "load failed" in result.output
