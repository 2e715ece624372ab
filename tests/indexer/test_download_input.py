"""`indexer download` against a hostile mirror: names that are paths, a listing without end, a
`Retry-After` that is not a number, a damaged manifest, and credentials in the source's URL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from tenacity import wait_fixed

from indexer import download
from tests.conftest import ROOT
from tests.indexer.receita_server import ReceitaServer, sample_month
from tests.indexer.test_download import cli
from tests.loopback import LoopbackApp

MONTH = sample_month()


@pytest.fixture
def receita() -> Iterator[ReceitaServer]:
    escaping = {"..%2F..%2FESCAPED.zip": b"PK", "%2Ftmp%2FABSOLUTE.zip": b"PK"}
    server = ReceitaServer({"2026-10": {**MONTH, **escaping}})
    yield server
    server.stop()


def test_a_name_that_is_a_path_is_rejected_and_nothing_lands_outside(
    receita: ReceitaServer, tmp_path: Path
) -> None:
    target = tmp_path / "a" / "b"
    report = asyncio.run(download.download(target, base=receita.url, regimes=""))
    assert not report.ok
    assert set(report.rejected) == {"../../ESCAPED.zip", "/tmp/ABSOLUTE.zip"}
    assert all("file name" in reason for reason in report.rejected.values())
    assert sorted(report.downloaded) == sorted(MONTH)  # the rest of the month is had
    assert not list(tmp_path.rglob("ESCAPED.zip"))
    assert not Path("/tmp/ABSOLUTE.zip").exists()


class Endless(LoopbackApp):
    """A listing that never ends, and one answering 503 with a `Retry-After` of `²`."""

    async def _endless(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        chunk = b"<a href='x'>x</a>" * 4096
        try:
            while True:
                await response.write(chunk)
        except ConnectionResetError:  # the client stopped reading, as it should
            return response

    async def _odd_charset(self, request: web.Request) -> web.Response:
        odd = {"Content-Type": "text/html; charset=bogus"}
        return web.Response(body=b"<p>nada</p>", headers=odd)

    async def _busy(self, request: web.Request) -> web.Response:
        return web.Response(status=503, headers={"Retry-After": "\u00b2"})

    async def _trickle(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": "1000000"})
        await response.prepare(request)
        try:
            for _ in range(300):
                await response.write(b"x")
                await asyncio.sleep(0.1)
        except ConnectionResetError:
            pass
        return response

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/endless/", self._endless)
        app.router.add_get("/busy/", self._busy)
        app.router.add_get("/odd/", self._odd_charset)
        app.router.add_get("/trickle.zip", self._trickle)


@pytest.fixture
def endless() -> Iterator[Endless]:
    server = Endless()
    server.start()
    yield server
    server.stop()


def test_a_listing_without_end_or_with_an_odd_retry_after_is_one_line(
    endless: Endless, tmp_path: Path
) -> None:
    base = f"http://mirror:S3cretPW@127.0.0.1:{endless.port}"
    done = cli("download", str(tmp_path), "--source", f"{base}/endless/")
    assert done.returncode == 2, done.stderr
    assert "more than 8 MiB" in " ".join(done.stderr.split())
    assert "S3cretPW" not in done.stderr + done.stdout
    odd = cli("download", str(tmp_path), "--source", f"{base}/odd/")
    assert odd.returncode == 2, odd.stderr  # a charset Python does not know: read as UTF-8
    assert "no YYYY-MM/ folder" in " ".join(odd.stderr.split())
    busy = cli("download", str(tmp_path), "--source", f"{base}/busy/")
    assert busy.returncode == 2, busy.stderr
    assert "Traceback" not in busy.stderr
    assert "S3cretPW" not in busy.stderr + busy.stdout


def test_a_damaged_manifest_means_fetching_again(receita: ReceitaServer, tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "2026-10.manifest.json").write_text('{"files": [{"file": "Empresas0.zip"')
    report = asyncio.run(download.download(folder, base=receita.url, regimes=""))
    assert sorted(report.downloaded) == sorted(MONTH)
    assert any("cannot be read" in note for note in report.notes)


def test_shown_hides_the_password_of_any_url_in_a_text() -> None:
    said = "http://u:p@h:1/x answered 404; see https://a@b/c"
    assert download.shown(said) == "http://***@h:1/x answered 404; see https://***@b/c"
    assert download.shown("http://user:p@ss@host/x") == "http://***@host/x"
    assert download.shown(str(ROOT)) == str(ROOT)


def test_a_file_trickling_in_is_given_up_on(
    endless: Endless, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "PACE_WINDOW", 1.0)
    monkeypatch.setattr(download, "_BACKOFF", wait_fixed(0))
    monkeypatch.setattr(download, "_retrying", partial(download._retrying, 2))

    async def fetch() -> None:
        async with aiohttp.ClientSession() as session:
            source = download.Source(session, f"http://127.0.0.1:{endless.port}/")
            await source.fetch(source.base + "trickle.zip", tmp_path / "t.part", download.Stats())

    with pytest.raises(download.TransientError, match="slower than 10 KB/s"):
        asyncio.run(fetch())
