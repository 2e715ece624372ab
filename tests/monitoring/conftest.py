"""Monitoring against real parts: the API and `registry-worker` processes, a real HTTP receiver
on loopback that verifies every Standard Webhooks signature, and releases loaded into a real
index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from tests.conftest import SAMPLE, Issued, Loader, Server, serving
from tests.peers import Receiver, Worker


def api_env() -> dict[str, str]:
    return {"WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "WEBHOOK_ALLOW_HTTP": "true"}


@pytest.fixture(scope="module", autouse=True)
def own_monitors(database: str) -> Iterator[None]:
    """Removes the module's monitors when it ends: every check looks at every active monitor,
    and the next module's releases are not this module's business."""
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM monitores").fetchone()
    yield
    with psycopg.connect(database) as conn:
        conn.execute("DELETE FROM monitores WHERE id > %s", (row[0] if row else 0,))


@pytest.fixture(scope="module")
def monitored_alias(load: Loader, new_alias: Callable[[], str]) -> str:
    alias = new_alias()
    load(SAMPLE, alias)
    return alias


@pytest.fixture(scope="module")
def server(monitored_alias: str) -> Iterator[Server]:
    with serving(monitored_alias, env=api_env()) as running:
        yield running


@pytest.fixture(scope="module")
def worker(monitored_alias: str) -> Iterator[Worker]:
    running = Worker(monitored_alias)
    yield running
    running.stop()


def create_monitor(
    server: Server, key: Issued, receiver: Receiver, name: str, cnpj: str, **fields: Any
) -> dict[str, Any]:
    with server.client(headers=key.headers) as client:
        response = client.post(
            "/v1/me/monitoramentos",
            json={"cnpj": cnpj, "webhook_url": receiver.url(name), **fields},
        )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    receiver.secrets[name] = created["segredo"]
    return created


def log_of(server: Server, key: Issued, **params: Any) -> list[dict[str, Any]]:
    with server.client(headers=key.headers) as client:
        response = client.get("/v1/me/monitoramentos/logs", params=params)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def force_change(database: str, server: Server, key: Issued, monitor_id: int) -> dict[str, Any]:
    """Makes the monitor's baseline an older record (another legal name), then asks for the
    check: the live record differs, so an `empresa.alterada` event is raised."""
    age_baselines(database, [monitor_id])
    with server.client(headers=key.headers) as client:
        answer = client.post(f"/v1/me/monitoramentos/{monitor_id}/verificar")
    checked: dict[str, Any] = answer.json()
    assert checked["alterado"] is True
    assert checked["entrega_id"]
    return checked


def age_baselines(database: str, monitor_ids: list[int]) -> None:
    """Gives monitors a baseline with another legal name, as if the last release had one."""
    with psycopg.connect(database) as conn:
        conn.execute(
            "UPDATE monitores SET referencia = jsonb_set(referencia, '{razao_social}', "
            "'\"NOME ANTIGO LTDA\"'), referencia_hash = 'antigo' WHERE id = ANY(%s)",
            (monitor_ids,),
        )
