"""Leads against real parts: a release built by `tests.leads.release` (with its oracle) in a
real index, the API and `registry-worker` processes sharing a lots directory, a webhook
receiver on loopback, and accounts on plans with and without lots."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.conftest import Issued, Loader, MakeKey, Server, serving
from tests.leads import release
from tests.peers import Worker

PAID_PLAN = "teste-leads"
SMALL_PLAN = "teste-leads-pequeno"


@pytest.fixture(scope="session")
def leads_alias(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> str:
    alias = new_alias()
    load(release.write(tmp_path_factory.mktemp("leads") / "release"), alias)
    return alias


@pytest.fixture(scope="session")
def plans(database: str) -> None:
    """A paid plan with room for the suite's lots, and a small one for the allowance."""
    with psycopg.connect(database) as conn:
        for name, allowance in ((PAID_PLAN, 1_000_000), (SMALL_PLAN, 1_000)):
            conn.execute(
                "INSERT INTO planos (nome, limite_por_minuto, leads_mes) VALUES (%s, 1000000, %s) "
                "ON CONFLICT (nome) DO UPDATE SET leads_mes = excluded.leads_mes",
                (name, allowance),
            )


@pytest.fixture(scope="session")
def paid_key(plans: None, make_key: MakeKey) -> Issued:
    return make_key(PAID_PLAN)


@pytest.fixture(scope="session")
def lots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lotes")


def environment(lots_dir: Path) -> dict[str, str]:
    return {
        "LOTS_DIR": str(lots_dir),
        "WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8",
        "WEBHOOK_ALLOW_HTTP": "true",
    }


@pytest.fixture(scope="session")
def leads_server(leads_alias: str, lots_dir: Path) -> Iterator[Server]:
    with serving(leads_alias, env=environment(lots_dir)) as server:
        yield server


@pytest.fixture(scope="module")
def worker(leads_alias: str, lots_dir: Path) -> Iterator[Worker]:
    running = Worker(leads_alias, **environment(lots_dir))
    yield running
    running.stop()


def get(server: Server, key: Issued, path: str, **params: Any) -> httpx.Response:
    with server.client(headers=key.headers, timeout=30) as client:
        return client.get(path, params=params)


def ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def lot_state(server: Server, key: Issued, lote_id: int) -> dict[str, Any]:
    found: dict[str, Any] = ok(get(server, key, f"/v1/me/lotes/{lote_id}"))
    return found


def all_pages(server: Server, key: Issued, **params: Any) -> list[dict[str, Any]]:
    """Every lead of `/v1/leads` for the filters, page after page through the cursor."""
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        more: dict[str, str] = {"cursor": cursor} if cursor else {}
        page = ok(get(server, key, "/v1/leads", limit=100, **params, **more))
        found += page["data"]
        cursor = page["next_cursor"]
        if not cursor:
            return found


def usage_once_written(server: Server, key: Issued, calls: int) -> dict[str, int]:
    """The key's usage counters (`/v1/me/uso`) once the audit writer, which works off the
    request path, has counted `calls` metered calls."""
    costs = ("consultas", "buscas", "analises", "exportacoes")
    deadline = time.monotonic() + 30
    while True:
        rows = ok(get(server, key, "/v1/me/uso"))["data"]
        found = {cost: sum(row[cost] for row in rows if row["chave_id"] == key.key_id)
                 for cost in costs}  # fmt: skip
        if sum(found.values()) >= calls:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def wait_lot(
    server: Server,
    key: Issued,
    lote_id: int,
    states: tuple[str, ...] = ("concluido",),
    seconds: float = 60,
) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        found = lot_state(server, key, lote_id)
        if found["estado"] in states:
            return found
        assert found["estado"] in ("pendente", "processando"), found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)
