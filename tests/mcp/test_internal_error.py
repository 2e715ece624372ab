"""A bug of ours on the agent interface: JSON-RPC's internal error (-32603) in the JSON-RPC
shape, never the REST error body, nothing of the error told, the traceback logged. No request of
the suite reaches a bug, so the app is served in process with one method broken on purpose; the
rest of it (Elasticsearch, PostgreSQL, Redis) is real."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient
from procrastinate import PsycopgConnector

from app.core import create_app
from app.errors import INTERNAL_MESSAGE
from app.mcp import server
from app.mcp.protocol import INTERNAL_ERROR
from app.settings import get_settings
from app.worker.queue import queue

SECRET = "senha=segredo-interno"


@pytest.fixture
def broken_ping(monkeypatch: pytest.MonkeyPatch, agent_alias: str) -> Iterator[TestClient[Any]]:
    """The app with `ping` raising an error no handler expects; every other method as usual."""
    dispatch = server.dispatch

    async def broken(context: server.Context, method: str, raw: Any) -> Any:
        if method == "ping":
            raise RuntimeError(SECRET)
        return await dispatch(context, method, raw)

    monkeypatch.setattr(server, "dispatch", broken)
    settings = msgspec.structs.replace(get_settings(), index_alias=agent_alias)
    # The job queue is the module's one app: its connector keeps the pool it was opened with,
    # closed by the lifespan's end, so this process's own is a connector of its own.
    with (
        queue.replace_connector(PsycopgConnector()),
        TestClient(create_app(settings), base_url="http://127.0.0.1") as client,
    ):
        yield client


def test_a_bug_answers_internal_error_with_the_request_id(
    broken_ping: TestClient[Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="app.errors"):
        response = broken_ping.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": INTERNAL_ERROR, "message": INTERNAL_MESSAGE},
    }
    assert SECRET not in response.text
    [record] = caplog.records
    assert record.getMessage() == "unhandled RuntimeError on POST /mcp"
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == SECRET


def test_a_bug_in_a_batch_fails_its_message_alone(broken_ping: TestClient[Any]) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    response = broken_ping.post("/mcp", json=batch)
    assert response.status_code == 200
    failed, listed = response.json()
    assert failed == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": INTERNAL_ERROR, "message": INTERNAL_MESSAGE},
    }
    assert listed["id"] == 2
    assert {"consultar_cnpj", "buscar_empresas"} <= {t["name"] for t in listed["result"]["tools"]}
