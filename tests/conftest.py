"""Shared fixtures: the real Elasticsearch, a loader, and the API served by uvicorn workers.

`scripts/test.sh` starts the services; the URLs come from the same environment variables the
app reads. Each test loads into its own alias, so tests never see each other's data. The
session applies the database migrations; every server gets a Redis key prefix of its own, so
rate-limit windows of one server never leak into another's tests. The shared `api` client
sends the Bearer key of an account on a high-limit test plan (a row of data, `TEST_PLAN`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from elasticsearch import Elasticsearch
from hypothesis import settings

from app.accounts import service
from app.accounts.keys import check_secret
from app.lib.migrate import migrate
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

# A secret of the session when none is given: keys are made by the tests themselves.
os.environ.setdefault("API_KEY_SECRET", secrets.token_hex(32))
TEST_PLAN = "teste-alto-volume"
"""A plan row the session adds for the generic test key: the suite makes hundreds of requests
a minute. Rate-limit tests use the real Starter plan and the anonymous limit."""

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


@dataclass(frozen=True)
class Issued:
    key: str
    key_id: str
    conta_id: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


MakeKey = Callable[..., Issued]


@functools.cache
def migrated() -> str:
    """The migrated database (the real migrations, applied as `registry-admin migrate` does),
    with the test plan row."""
    url = get_settings().database_url
    migrate(url)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO planos (nome, limite_por_minuto) VALUES (%s, 1000000) "
            "ON CONFLICT (nome) DO NOTHING",
            (TEST_PLAN,),
        )
    return url


def new_key(plano: str = TEST_PLAN, papel: str = "usuario") -> Issued:
    """A new account with one key, made by the app's own service code."""

    async def issue() -> Issued:
        secret = check_secret(get_settings().api_key_secret)
        async with await psycopg.AsyncConnection.connect(migrated()) as conn:
            conta, _ = await service.ensure_account(
                conn, nome="Teste", email=f"teste-{uuid.uuid4().hex}@example.com",
                telefone="", plano=plano, papel=papel,
            )  # fmt: skip
            issued = await service.issue_key(conn, secret, conta.id, "testes", [])
        return Issued(issued.api_key, issued.chave.id, conta.id)

    return asyncio.run(issue())


@functools.cache
def generic_key() -> Issued:
    """The key every test client sends unless a test says otherwise."""
    return new_key()


class Server:
    """The app under uvicorn with two worker processes, as in production."""

    def __init__(self, alias: str, workers: int = 2, env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.redis_prefix = f"test-{uuid.uuid4().hex[:10]}:"
        env = {**os.environ, "INDEX_ALIAS": alias, "REDIS_PREFIX": self.redis_prefix, **(env or {})}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.asgi:app", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(workers), "--no-access-log"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self.headers = generic_key().headers
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

    def client(self, address: str | None = None, **options: Any) -> httpx.Client:
        """A client that sends the generic test key (pass `headers={}` to send none), from the
        loopback `address` when given (127.0.0.2...: another caller for per-IP limits)."""
        options.setdefault("headers", self.headers)
        options.setdefault("timeout", 10)
        if address:
            options["transport"] = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=self.url, **options)

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
def database() -> str:
    return migrated()


@pytest.fixture(scope="session")
def make_key(database: str) -> MakeKey:
    return new_key


@pytest.fixture(scope="session")
def api_server(peer_alias: str) -> Iterator[Server]:
    server = Server(peer_alias)
    yield server
    log = server.stop()
    assert "Traceback" not in log, log
    assert generic_key().key not in log


@pytest.fixture(scope="session")
def api(api_server: Server) -> Iterator[httpx.Client]:
    """A client of the shared server that sends the generic test key."""
    with api_server.client() as client:
        yield client
