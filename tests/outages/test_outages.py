"""Dependencies failing while the app runs, one at a time, by stopping the real service (with
`scripts/services.sh stop|start`) or freezing it: what needs it answers JSON 503 with
`Retry-After` in a bounded time, what does not keeps answering, `/v1/status` names what is down,
and service comes back without restarting the app once the dependency returns. The audit
writer rides out a short PostgreSQL outage and gives up, counting the rows, on a long one.

These tests stop services the rest of the suite shares; each restores its service and waits for
it before it ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
import psutil
import psycopg
import pytest
from elasticsearch import Elasticsearch
from psycopg_pool import AsyncConnectionPool

from app.audit import writer as audit_writer
from app.audit.repository import Entrada
from app.audit.writer import AuditWriter
from tests.conftest import ROOT, SERPRO, MakeKey, Server, serving

SERVICES = ["bash", str(ROOT / "scripts" / "services.sh")]
VALIDATE = "/v1/cnpj/validar/11222333000181"
RECOVERY = 5.0
"""Seconds within which service must be back once the dependency answers again."""


def service(action: str, name: str) -> str:
    done = subprocess.run([*SERVICES, action, name], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def until(check: Callable[[], bool], seconds: float) -> float:
    """Seconds it took `check` to hold; fails after `seconds`."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(0.1)
    return time.monotonic() - started


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "Service Unavailable"
    assert int(response.headers["Retry-After"]) > 0


def _down(server: Server) -> set[str]:
    body = httpx.get(f"{server.url}/v1/status", timeout=10).json()
    return {name for name, d in body["dependencies"].items() if d["status"] == "down"}


@pytest.fixture(scope="module")
def server(peer_alias: str) -> Iterator[Server]:
    with serving(peer_alias, env={"REQUEST_TIMEOUT": "1", "HEALTH_TIMEOUT": "1"}) as running:
        yield running


def test_redis_stopped_mid_run_limited_routes_503_then_back(
    server: Server, make_key: MakeKey
) -> None:
    key = make_key()
    with server.client(headers=key.headers) as keyed, server.client(headers={}) as anonymous:
        assert keyed.get(VALIDATE).status_code == 200
        service("stop", "redis")
        try:
            assert_unavailable(keyed.get(VALIDATE))
            assert_unavailable(anonymous.get(VALIDATE))
            assert anonymous.get("/health").status_code == 503
            assert _down(server) == {"redis"}
            with server.client(headers={}, cookies={"painel_sessao": "uma-sessao"}) as browser:
                page = browser.get("/painel")
            assert page.status_code == 503  # the dashboard's sessions live in Redis
            assert "Sessões indisponíveis" in page.text
            assert int(page.headers["Retry-After"]) > 0
        finally:
            service("start", "redis")
        until(lambda: keyed.get(VALIDATE).status_code == 200, RECOVERY)
        assert anonymous.get(VALIDATE).status_code == 200
        assert _down(server) == set()


def test_postgresql_stopped_mid_run_new_keys_503_known_keys_and_anonymous_served(
    server: Server, make_key: MakeKey
) -> None:
    """A key the processes checked before (in their credential caches) keeps working while
    PostgreSQL is away; a key never seen cannot be checked: 503, bounded, no hang."""
    key, unseen = make_key(), make_key()
    # The known key's requests share one connection, kept across the outage: it reaches the
    # worker that checked the key. A new connection may reach the other worker, which never
    # saw the key and rightly answers 503.
    one_connection = httpx.Limits(max_connections=1, keepalive_expiry=60)
    with (
        server.client(headers=key.headers, limits=one_connection) as keyed,
        server.client(headers=unseen.headers) as new,
        server.client(headers={}) as anonymous,
    ):
        for _ in range(10):  # the worker checks the key and keeps it
            assert keyed.get(f"/v1/cnpj/{SERPRO}").status_code == 200
        service("stop", "postgresql")
        try:
            for _ in range(10):  # right away: the server keeps an idle connection 5 s
                assert keyed.get(f"/v1/cnpj/{SERPRO}").status_code == 200
            # An agent's tool that needs the database fails as a tool, in JSON-RPC, beside one
            # that does not: not the REST 503 of the whole answer.
            lot = {"name": "consultar_lote_leads", "arguments": {"id": 1}}
            company = {"name": "consultar_cnpj", "arguments": {"cnpj": SERPRO}}
            batch = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
                     for n, params in enumerate((lot, company))]  # fmt: skip
            answered = keyed.post("/mcp", json=batch)
            assert answered.status_code == 200, answered.text
            failed, found = (reply["result"] for reply in answered.json())
            assert failed["isError"] is True
            assert "banco de dados está indisponível" in failed["content"][0]["text"]
            assert "isError" not in found
            assert found["structuredContent"]["cnpj"] == SERPRO
            started = time.monotonic()
            assert_unavailable(new.get(f"/v1/cnpj/{SERPRO}"))
            assert time.monotonic() - started < 5  # bounded by REQUEST_TIMEOUT, no hang
            assert anonymous.get(f"/v1/cnpj/{SERPRO}").status_code == 200
            assert _down(server) == {"postgresql"}
        finally:
            service("start", "postgresql")
        until(lambda: new.get(f"/v1/cnpj/{SERPRO}").status_code == 200, RECOVERY)
        # Every worker's status says PostgreSQL is back, including one whose requests have not
        # needed PostgreSQL since the restart (its keys are cached).
        for _ in range(8):
            assert _down(server) == set()


def test_elasticsearch_frozen_answers_bounded_503_then_back(
    server: Server, make_key: MakeKey
) -> None:
    """A hung cluster (SIGSTOP): every read gives up after `REQUEST_TIMEOUT` and a retry."""
    pid = int(service("pid", "elasticsearch"))
    with server.client(headers=make_key().headers, timeout=30) as client:
        assert client.get(f"/v1/cnpj/{SERPRO}").status_code == 200
        os.kill(pid, signal.SIGSTOP)
        try:
            for path in (
                f"/v1/cnpj/{SERPRO}",
                "/v1/search?q=serpro",
                "/v1/search/cnae?query=padaria",
            ):
                started = time.monotonic()
                assert_unavailable(client.get(path))
                assert time.monotonic() - started < 5, path
            assert client.get(VALIDATE).status_code == 200  # needs no index
            assert "elasticsearch" in _down(server)
        finally:
            os.kill(pid, signal.SIGCONT)
        until(lambda: client.get(f"/v1/cnpj/{SERPRO}").status_code == 200, RECOVERY)


def test_status_names_a_hung_dependency_within_its_own_timeout(peer_alias: str) -> None:
    """A frozen Redis (SIGSTOP) answers nothing: the status gives up on it after
    `HEALTH_TIMEOUT`, shorter than the requests' timeout, and says so; back once it runs."""
    pid = int(service("pid", "redis"))
    env = {"REQUEST_TIMEOUT": "3", "HEALTH_TIMEOUT": "0.5"}
    with serving(peer_alias, workers=1, env=env) as running:
        assert _down(running) == set()
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            answer = httpx.get(f"{running.url}/v1/status", timeout=10)
            assert time.monotonic() - started < 2
            assert answer.status_code == 503
            assert answer.json()["dependencies"]["redis"] == {
                "status": "down",
                "detail": "no answer within 0.5 s",
            }
        finally:
            os.kill(pid, signal.SIGCONT)
        until(lambda: _down(running) == set(), RECOVERY)


def test_elasticsearch_stopped_mid_run_rest_and_agents_503_then_back(
    server: Server, make_key: MakeKey, es: Elasticsearch
) -> None:
    key = make_key()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "consultar_cnpj", "arguments": {"cnpj": SERPRO}},
    }
    read = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "resources/read",
        "params": {"uri": "service://municipios/DF"},
    }
    with server.client(headers=key.headers, timeout=30) as client:
        service("stop", "elasticsearch")
        try:
            assert_unavailable(client.get(f"/v1/cnpj/{SERPRO}"))
            assert_unavailable(client.post("/v1/cnpj/lote", json=[SERPRO]))
            tool = client.post("/mcp", json=call).json()["result"]
            assert tool["isError"] is True
            assert "não está disponível" in tool["content"][0]["text"]
            resource = client.post("/mcp", json=read)
            assert resource.status_code == 503
            assert resource.json()["error"]["code"] == -32053
            assert int(resource.headers["Retry-After"]) > 0
            assert _down(server) == {"elasticsearch"}
        finally:
            service("start", "elasticsearch")
        # Back means every index recovered (yellow), as in scripts/faults.py: the start command
        # returns once the node answers, and the recovery of the suite's many indices takes
        # seconds more on a loaded machine.
        es.options(request_timeout=130).cluster.health(wait_for_status="yellow", timeout="120s")
        until(lambda: client.get(f"/v1/cnpj/{SERPRO}").status_code == 200, RECOVERY)
        assert client.post("/mcp", json=read).status_code == 200


def test_no_release_and_no_catalog_503_say_so(make_key: MakeKey) -> None:
    with (
        serving(f"test-empty-{os.getpid()}") as empty,
        empty.client(headers=make_key().headers) as client,
    ):
        lookup = client.get(f"/v1/cnpj/{SERPRO}")
        assert_unavailable(lookup)
        assert "Nenhuma base" in lookup.json()["message"]
        assert_unavailable(client.get("/v1/seek", params={"uf": "SP"}))
        catalog = client.get("/v1/search/cnae", params={"query": "padaria"})
        assert_unavailable(catalog)
        assert "catálogo" in catalog.json()["message"]
        status = client.get("/v1/status").json()
        assert status["index"] == {
            "alias": f"test-empty-{os.getpid()}",
            "name": None,
            "documents": None,
            "data_referencia": None,
            "carregada_em": None,
        }


def _rows(key_id: str, count: int) -> list[Entrada]:
    return [
        Entrada(
            chave_id=key_id,
            metodo="GET",
            rota="/v1/teste",
            caminho="/v1/teste",
            ip="127.0.0.1",
            user_agent="outage",
            status=200,
            em=datetime.now(UTC),
            custo="consultas",
        )
        for _ in range(count)
    ]


def _stored(database: str, key_id: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM auditoria WHERE chave_id = %s", (key_id,)
        ).fetchone()
    return int(row[0]) if row else 0


def test_audit_writer_rides_out_short_postgresql_outage(make_key: MakeKey, database: str) -> None:
    key = make_key()

    async def scenario() -> AuditWriter:
        async with AsyncConnectionPool(
            database, min_size=1, max_size=2, timeout=1, kwargs={"autocommit": True}
        ) as pool:
            writer = AuditWriter(pool)
            writer.start()
            await asyncio.to_thread(service, "stop", "postgresql")
            for row in _rows(key.key_id, 30):
                writer.record(row)
            await asyncio.sleep(1.5)  # the writer is retrying
            await asyncio.to_thread(service, "start", "postgresql")
            await writer.close()
            return writer

    writer = asyncio.run(scenario())
    assert writer.lost == 0
    assert _stored(database, key.key_id) == 30


def test_audit_writer_rides_out_an_outage_longer_than_its_backoff(
    make_key: MakeKey, database: str
) -> None:
    """PostgreSQL away for longer than every growing delay together (0.1 + 0.5 + 1 + 2 + 5 s):
    the writer keeps trying every 5 s, and writes every row once it is back."""
    key = make_key()
    delays = audit_writer.RETRY_DELAYS

    async def scenario() -> AuditWriter:
        async with AsyncConnectionPool(
            database, min_size=1, max_size=2, timeout=0.5, kwargs={"autocommit": True}
        ) as pool:
            writer = AuditWriter(pool)
            writer.start()
            await asyncio.to_thread(service, "stop", "postgresql")
            try:
                for row in _rows(key.key_id, 12):
                    writer.record(row)
                await asyncio.sleep(sum(delays) + 4)
                assert writer.lost == 0
            finally:
                await asyncio.to_thread(service, "start", "postgresql")
            await writer.close()
            return writer

    writer = asyncio.run(scenario())
    assert writer.lost == 0
    assert _stored(database, key.key_id) == 12


def test_audit_writer_closing_with_postgresql_down_gives_up_in_bounded_time_and_counts(
    make_key: MakeKey, database: str
) -> None:
    """A process told to stop while PostgreSQL is away waits for it `timeout` seconds, then
    counts every row it could not write (the one in flight and the queued ones) as lost."""
    key = make_key()

    async def scenario() -> tuple[AuditWriter, float]:
        async with AsyncConnectionPool(
            database, min_size=1, max_size=2, timeout=0.5, kwargs={"autocommit": True}
        ) as pool:
            writer = AuditWriter(pool)
            writer.start()
            await asyncio.to_thread(service, "stop", "postgresql")
            try:
                for row in _rows(key.key_id, 12):
                    writer.record(row)
                await asyncio.sleep(1)
                for row in _rows(key.key_id, 700):  # two more batches behind the first
                    writer.record(row)
                started = time.monotonic()
                await writer.close(timeout=2)
                took = time.monotonic() - started
            finally:
                await asyncio.to_thread(service, "start", "postgresql")
            return writer, took

    writer, took = asyncio.run(scenario())
    assert writer.lost == 712
    assert took < 10
    assert _stored(database, key.key_id) == 0


def test_postgresql_restart_breaks_no_request_after_it(server: Server, make_key: MakeKey) -> None:
    """Connections pooled before a restart are replaced when handed out: once PostgreSQL
    answers again, no request fails on a stale connection (two workers, ten each)."""
    keys = [make_key() for _ in range(4)]
    with server.client() as client:
        for key in keys:  # fill the pools of both workers
            answer = client.get(VALIDATE, headers=key.headers)
            assert answer.status_code == 200, answer.text
    service("stop", "postgresql")
    service("start", "postgresql")
    responses = asyncio.run(_burst(server.url, [key.headers for key in keys], 40))
    assert [r.status_code for r in responses] == [200] * 40


async def _burst(url: str, headers: list[dict[str, str]], count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        return await asyncio.gather(
            *(client.get(VALIDATE, headers=headers[n % len(headers)]) for n in range(count))
        )


def _cut_database_connections(server: Server, database: str) -> int:
    """Ends, on the PostgreSQL side, every connection the server's processes hold (as a
    restart does, but to this server alone); how many."""
    port = urlsplit(database).port or 5432
    parent = psutil.Process(server.process.pid)
    ports = [
        connection.laddr.port
        for process in [parent, *parent.children(recursive=True)]
        for connection in process.net_connections(kind="tcp")
        if connection.raddr and connection.raddr.port == port
    ]
    with psycopg.connect(database, autocommit=True) as conn:
        cut = conn.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE client_port = ANY(%s)",
            (ports,),
        ).fetchone()
    return int(cut[0]) if cut else 0


def test_status_first_to_meet_a_broken_postgresql_connection_says_up(
    peer_alias: str, database: str
) -> None:
    """A process whose only PostgreSQL use is the status (one worker, no key): its pooled
    connection, ended on the server's side, fails once; the pool is checked, and that same
    call says `up`."""
    with serving(peer_alias, workers=1) as single:
        assert _down(single) == set()
        time.sleep(0.5)  # the audit row of that call written: the pool's connection is idle
        assert _cut_database_connections(single, database) >= 1
        assert _down(single) == set()
