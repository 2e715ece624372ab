"""Shared fixtures: the real Elasticsearch, a loader, and the API served by uvicorn workers.

`scripts/test.sh` starts the services; the URLs come from the same environment variables the
app reads. Each test loads into its own alias, so tests never see each other's data.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch
from hypothesis import settings

from app.settings import get_settings
from indexer import elastic
from indexer.load import LoadReport, Options, Progress, run

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARED_DATA", ROOT.parent / "shared" / "data"))
if not SHARED.is_dir():
    raise RuntimeError(f"shared test data not found at {SHARED}: set SHARED_DATA")
PEER_DATA = SHARED / "minha-receita-testdata"
RECEITA_SAMPLE = SHARED / "receita-sample"
SERPRO = "33683111000280"

Loader = Callable[..., LoadReport]

# Examples that go through HTTP to the real services take what the machine gives them; a
# per-example deadline would turn a slow moment into a failure that says nothing about the code.
settings.register_profile("services", deadline=None, print_blob=True)
settings.load_profile("services")


@pytest.fixture(scope="session")
def es() -> Iterator[Elasticsearch]:
    client = elastic.connect(get_settings().elasticsearch_url)
    client.cluster.health(wait_for_status="yellow", timeout="60s")
    yield client
    client.close()


@pytest.fixture(scope="session")
def aliases(es: Elasticsearch) -> Iterator[list[str]]:
    """Aliases created during the session; their release indices are deleted at the end."""
    created: list[str] = []
    yield created
    for alias in created:
        for info in elastic.list_indices(es, alias):
            elastic.delete_release(es, info.name)


@pytest.fixture(scope="session")
def new_alias(aliases: list[str]) -> Callable[[], str]:
    def make() -> str:
        alias = f"test-{uuid.uuid4().hex[:10]}"
        aliases.append(alias)
        return alias

    return make


@pytest.fixture(scope="session")
def load(es: Elasticsearch, tmp_path_factory: pytest.TempPathFactory) -> Loader:
    """Run the indexer on a folder, as `indexer load` does, and return its report."""

    def run_load(path: Path, alias: str, **options: object) -> LoadReport:
        workdir = tmp_path_factory.mktemp("load")
        opts = Options(
            url=get_settings().elasticsearch_url,
            alias=alias,
            bad_rows_file=workdir / "bad-rows.csv",
            **options,  # type: ignore[arg-type]
        )
        return run(path, es, opts, Progress())

    return run_load


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """The app under uvicorn with two worker processes, as in production."""

    def __init__(self, alias: str, workers: int = 2) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "INDEX_ALIAS": alias}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.asgi:app", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(workers), "--no-access-log"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.process.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                httpx.get(f"{self.url}/health", timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("server did not answer in 30 s")

    def stop(self) -> str:
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err.decode("utf-8", "replace") if err else ""


@pytest.fixture(scope="session")
def peer_alias(load: Loader, new_alias: Callable[[], str]) -> str:
    """An alias holding the peer project's test release (SERPRO and friends)."""
    alias = new_alias()
    load(PEER_DATA, alias)
    return alias


@pytest.fixture(scope="session")
def api(peer_alias: str) -> Iterator[httpx.Client]:
    server = Server(peer_alias)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client
    log = server.stop()
    assert "Traceback" not in log, log
