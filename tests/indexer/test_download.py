"""`indexer download` and `indexer update` against a real HTTP server on loopback in the layout
of Receita's releases, which drops connections mid-file, answers 503 now and then and serves a
corrupt zip; downloads through an HTTP proxy from the environment; the update puts the month
live and a second update with nothing new does nothing."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from indexer import download, elastic
from tests.conftest import PEER_DATA, ROOT, SERPRO
from tests.indexer.receita_server import (
    Faults,
    Proxy,
    ReceitaServer,
    regime_files,
    sample_month,
)

INDEXER = ROOT / ".venv" / "bin" / "indexer"
MONTH = sample_month()
SIZE = sum(len(data) for data in MONTH.values())


@pytest.fixture
def serve() -> Iterator[Callable[..., ReceitaServer]]:
    started: list[ReceitaServer] = []

    def start(
        months: dict[str, dict[str, bytes]],
        faults: Faults | None = None,
        regimes: dict[str, bytes] | None = None,
    ) -> ReceitaServer:
        server = ReceitaServer(months, faults, regimes)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INDEXER), *args], cwd=ROOT, env={**os.environ, **env}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


def test_download_resumes_retries_and_verifies(
    serve: Callable[..., ReceitaServer], tmp_path: Path
) -> None:
    big = "Estabelecimentos0.zip"
    faults = Faults(
        drop_at={big: [len(MONTH[big]) // 3, len(MONTH[big]) // 2], "Socios0.zip": [100]},
        unavailable={"Empresas0.zip": 2, "Cnaes.zip": 1},
    )
    server = serve({"2026-09": {}, "2026-10": MONTH}, faults)
    report = asyncio.run(download.download(tmp_path, base=server.url, parallel=3))
    assert report.month == "2026-10", "the newest month"
    assert report.ok, report.rejected
    assert sorted(report.downloaded) == sorted(MONTH)
    for name, data in MONTH.items():
        assert (tmp_path / "2026-10" / name).read_bytes() == data
    assert not list((tmp_path / "2026-10").glob("*.part"))
    # Resumed where it stopped: no byte was fetched twice.
    assert report.bytes_fetched == SIZE
    resumed = [header for name, header in server.ranges if name == big]
    assert resumed[0] == f"bytes={len(MONTH[big]) // 3}-"
    assert len(resumed) == 2
    manifest = json.loads((tmp_path / "2026-10.manifest.json").read_text())
    entries = {item["file"]: item for item in manifest["files"]}
    assert set(entries) == set(MONTH)
    assert entries[big]["size"] == len(MONTH[big])
    assert entries[big]["url"] == server.url + "2026-10/" + big
    assert len(entries[big]["sha256"]) == 64
    again = asyncio.run(download.download(tmp_path, base=server.url, month="2026-10"))
    assert sorted(again.skipped) == sorted(MONTH)
    assert again.bytes_fetched == 0
    # This source has no tax-regime folder: the month is whole, and the report says so.
    assert again.ok
    assert len(again.notes) == 1
    assert "tax-regime files not fetched" in again.notes[0]


def test_update_fetches_the_tax_regime_files_beside_the_month(
    serve: Callable[..., ReceitaServer],
    tmp_path: Path,
    es: Elasticsearch,
    new_alias: Callable[[], str],
) -> None:
    """Receita keeps the yearly tax-regime zips in `regime_tributario/`, beside the months:
    `update` fetches them (resumable like the rest) into the month and the load reads them."""
    regimes = regime_files()
    month = {
        path.name: path.read_bytes()
        for path in sorted(PEER_DATA.glob("*.zip"))
        if path.name not in regimes
    }
    faults = Faults(drop_at={"Lucro Presumido.zip": [150]}, unavailable={"Lucro Real.zip": 1})
    server = serve({"2026-10": month}, faults, regimes)
    alias = new_alias()
    done = cli("update", str(tmp_path), "--source", server.url, "--alias", alias, "--report",
               str(tmp_path / "update.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "update.json").read_text())
    assert sorted(report["download"]["downloaded"]) == sorted([*month, *regimes])
    assert report["download"]["notes"] == []
    for name, data in regimes.items():
        assert (tmp_path / "2026-10" / name).read_bytes() == data
    manifest = json.loads((tmp_path / "2026-10.manifest.json").read_text())
    urls = {item["file"]: item["url"] for item in manifest["files"]}
    regimes_url = server.url.replace("dados_abertos_cnpj/", "regime_tributario/")
    assert urls["Lucro Presumido.zip"] == regimes_url + "Lucro Presumido.zip"
    (record,) = [hit["_source"] for hit in es.search(
        index=alias, query={"term": {"cnpj": SERPRO}})["hits"]["hits"]]  # fmt: skip
    assert [r["forma_de_tributacao"] for r in record["regime_tributario"]] == ["LUCRO PRESUMIDO"]
    assert record["data_referencia"] == "2026-10-01"


def test_a_corrupt_zip_is_rejected_with_a_clear_report(
    serve: Callable[..., ReceitaServer], tmp_path: Path
) -> None:
    # Socios0.zip: one byte flipped (a member fails its CRC); Paises.zip: a maintenance page
    # served as the file (not a zip at all).
    month = {**MONTH, "Paises.zip": b"<html>Em manutencao</html>"}
    server = serve({"2026-10": month}, Faults(corrupt={"Socios0.zip"}))
    result = cli("download", str(tmp_path), "--source", server.url, "--report",
                 str(tmp_path / "report.json"))  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "rejected Socios0.zip:" in result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report["rejected"]) == {"Socios0.zip", "Paises.zip"}
    assert "CRC" in report["rejected"]["Socios0.zip"]
    assert "not a valid zip" in report["rejected"]["Paises.zip"]
    assert not (tmp_path / "2026-10" / "Socios0.zip").exists()
    assert not (tmp_path / "2026-10" / "Socios0.zip.part").exists()
    assert server.served["Socios0.zip"] == 2 * len(MONTH["Socios0.zip"]), "fetched twice"
    manifest = json.loads((tmp_path / "2026-10.manifest.json").read_text())
    assert "Socios0.zip" not in {item["file"] for item in manifest["files"]}


def test_through_a_proxy_from_the_environment(
    serve: Callable[..., ReceitaServer], tmp_path: Path
) -> None:
    server = serve({"2026-10": MONTH})
    proxy = Proxy("receita.invalid", server.port)
    try:
        source = f"http://receita.invalid{server.url.split(str(server.port), 1)[1]}"
        result = cli("download", str(tmp_path), "--source", source,
                     HTTP_PROXY=f"http://127.0.0.1:{proxy.port}", NO_PROXY="")  # fmt: skip
    finally:
        proxy.stop()
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in (tmp_path / "2026-10").iterdir()) == sorted(MONTH)
    assert any(line.endswith("/2026-10/Estabelecimentos0.zip") for line in proxy.forwarded)


def test_unreachable_source_and_changed_layout_are_clear(
    serve: Callable[..., ReceitaServer], tmp_path: Path
) -> None:
    server = serve({})
    nothing = cli("download", str(tmp_path), "--source", server.url)
    assert nothing.returncode == 2
    assert "no YYYY-MM/ folder in the listing" in nothing.stderr
    down = cli("download", str(tmp_path), "--source", "http://127.0.0.1:9/dados/")
    assert down.returncode == 2
    assert "cannot be reached" in down.stderr
    assert "Traceback" not in down.stderr + nothing.stderr
    bad = cli("download", str(tmp_path), "--month", "2026-13")
    assert bad.returncode == 2
    stopped = cli("update", str(tmp_path), "--source", server.url, "--alias", "nunca-criado")
    assert stopped.returncode == 2
    assert "update failed: no YYYY-MM/ folder" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    dead = cli("update", str(tmp_path), "--source", serve({"2026-10": MONTH}).url,
               "--url", "http://127.0.0.1:9", "--alias", "nunca-criado")  # fmt: skip
    assert dead.returncode == 1
    assert "update failed: Elasticsearch at http://127.0.0.1:9" in dead.stderr
    assert "Traceback" not in dead.stderr


def test_update_puts_the_newest_month_live_once(
    serve: Callable[..., ReceitaServer],
    tmp_path: Path,
    es: Elasticsearch,
    new_alias: Callable[[], str],
) -> None:
    alias = new_alias()
    faults = Faults(drop_at={"Estabelecimentos0.zip": [5000]}, unavailable={"Simples.zip": 1})
    server = serve({"2026-09": {}, "2026-10": MONTH}, faults)
    first = cli("update", str(tmp_path), "--source", server.url, "--alias", alias, "--report",
                str(tmp_path / "update.json"))  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    report = json.loads((tmp_path / "update.json").read_text())
    assert report["estado"] == "carregado"
    assert report["newest"] == "2026-10"
    assert elastic.release_month(es, alias) == "2026-10"
    assert elastic.alias_targets(es, alias) == [report["index"]]
    assert es.count(index=alias)["count"] == report["documents"] == 2000
    second = cli("update", str(tmp_path), "--source", server.url, "--alias", alias)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "nothing new" in second.stderr
    assert [info.name for info in elastic.list_indices(es, alias)] == [report["index"]]


def test_update_runs_one_at_a_time_and_prunes_old_downloads(
    serve: Callable[..., ReceitaServer],
    tmp_path: Path,
    es: Elasticsearch,
    new_alias: Callable[[], str],
) -> None:
    """A run that finds the folder's lock held does nothing (exit 1, said in one line); a run
    that puts a month live keeps only the newest `--keep` downloaded months."""
    alias = new_alias()
    server = serve({"2026-10": MONTH})
    old = tmp_path / "2026-08"
    old.mkdir(parents=True)
    (old / "Empresas0.zip").write_bytes(b"an old month")
    (tmp_path / "2026-08.manifest.json").write_text("{}")
    (tmp_path / "notes").mkdir()
    with (tmp_path / ".update.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = cli("update", str(tmp_path), "--source", server.url, "--alias", alias)
        fcntl.flock(held, fcntl.LOCK_UN)
    assert busy.returncode == 1
    assert "update not started: another update is running" in busy.stderr
    assert "Traceback" not in busy.stderr
    assert elastic.alias_targets(es, alias) == []
    assert not (tmp_path / "2026-10").exists()
    done = cli("update", str(tmp_path), "--source", server.url, "--alias", alias, "--keep", "1",
               "--report", str(tmp_path / "update.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "update.json").read_text())
    assert report["downloads_removed"] == ["2026-08"]
    assert not old.exists()
    assert not (tmp_path / "2026-08.manifest.json").exists()
    assert (tmp_path / "2026-10" / "Empresas0.zip").read_bytes() == MONTH["Empresas0.zip"]
    assert (tmp_path / "notes").is_dir()


def test_a_folder_that_cannot_be_written_is_one_line(
    serve: Callable[..., ReceitaServer], tmp_path: Path
) -> None:
    """The months' folder is a file (as a full disk or a wrong path would be): both commands say
    so in one line and exit 1, no traceback."""
    server = serve({"2026-10": MONTH})
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file")
    fetched = cli("download", str(blocked), "--source", server.url)
    assert fetched.returncode == 1
    assert "download failed: cannot write to" in fetched.stderr
    updated = cli("update", str(blocked), "--source", server.url, "--alias", "test-unwritable")
    assert updated.returncode == 1
    assert "update failed:" in updated.stderr
    assert "Traceback" not in fetched.stderr + updated.stderr
