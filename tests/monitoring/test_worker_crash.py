"""Workers that die: a worker SIGKILLed in the middle of a delivery, one of two workers killed
while they share a batch of deliveries, a worker whose database restarts under it, and one whose
listening connection cannot be opened again. No event is lost; an event delivered twice carries
the same `webhook-id` both times."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Iterator

import procrastinate
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from app.monitoring import releases
from tests.conftest import ROOT, MakeKey, Server
from tests.monitoring.conftest import age_baselines, create_monitor, force_change
from tests.peers import Receiver, Worker, until

SAMPLE_CNPJ = "57815224000179"


@pytest.fixture
def workers(monitored_alias: str) -> Iterator[list[Worker]]:
    """Workers a test starts (`workers.append(Worker(alias))`); the live ones are stopped and
    their logs checked at the end, the killed ones only closed."""
    started: list[Worker] = []
    yield started
    for running in started:
        if running.process.returncode is None:
            running.stop()
        else:
            running.log_file.close()


def _states(database: str, monitor_ids: list[int]) -> dict[str, str]:
    with psycopg.connect(database) as conn:
        found = conn.execute(
            "SELECT id::text, estado FROM entregas WHERE monitor_id = ANY(%s)", (monitor_ids,)
        ).fetchall()
    return dict(found)


def test_worker_killed_mid_delivery_delivery_completes_after_restart(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    database: str,
    monitored_alias: str,
    workers: list[Worker],
) -> None:
    key = make_key()
    receiver.plan("morto", (200, {}, 8.0))  # the first answer comes after the kill
    monitor = create_monitor(server, key, receiver, "morto", SAMPLE_CNPJ)["monitor"]
    first = Worker(monitored_alias)
    workers.append(first)
    checked = force_change(database, server, key, monitor["id"])
    receiver.wait("morto", 1)  # the request is in flight, its job `doing`
    first.kill()
    killed_at = time.monotonic()
    assert _states(database, [monitor["id"]]) == {checked["entrega_id"]: "pendente"}

    workers.append(Worker(monitored_alias))
    until(lambda: _states(database, [monitor["id"]])[checked["entrega_id"]] == "entregue")
    recovered_in = time.monotonic() - killed_at
    got = receiver.of("morto")
    assert len(got) == 2
    assert {item.headers["webhook-id"] for item in got} == {checked["entrega_id"]}
    assert all(item.verified for item in got)
    assert recovered_in < 30, recovered_in  # seconds, not the retry schedule's hours


def test_two_workers_one_killed_no_event_lost(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    database: str,
    monitored_alias: str,
    workers: list[Worker],
) -> None:
    keys = [make_key(), make_key()]
    names = [f"duo-{n}" for n in range(16)]
    for name in names:
        receiver.plan(name, (200, {}, 0.5))  # slow answers keep deliveries in flight
    ids = {
        name: create_monitor(server, keys[n % 2], receiver, name, SAMPLE_CNPJ)["monitor"]["id"]
        for n, name in enumerate(names)
    }
    workers.extend([Worker(monitored_alias), Worker(monitored_alias)])
    age_baselines(database, list(ids.values()))
    with server.client(headers=make_key(papel="admin").headers) as admin:
        rodada = admin.post("/v1/admin/monitoramentos/run").json()
    assert rodada["eventos"] >= len(names)

    until(lambda: sum(len(receiver.of(name)) for name in names) >= 4)
    workers[0].kill()
    states = until(
        lambda: (
            set((found := _states(database, list(ids.values()))).values()) == {"entregue"} and found
        ),
        seconds=60,
    )
    assert len(states) == len(names)
    for name in names:
        got = receiver.of(name)
        assert got, name
        assert len({item.headers["webhook-id"] for item in got}) == 1, name
        assert got[0].headers["webhook-id"] in states
        assert all(item.verified for item in got)


def _service(action: str, name: str) -> None:
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "services.sh"), action, name],
        check=True,
        capture_output=True,
    )


def test_worker_rides_out_a_database_restart(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    database: str,
    monitored_alias: str,
) -> None:
    """The queue's worker stops with an error when its database goes away; the process starts
    it again, waiting, until the database answers, and goes on delivering."""
    key = make_key()
    monitor = create_monitor(server, key, receiver, "reinicio", SAMPLE_CNPJ)["monitor"]
    worker = Worker(monitored_alias)
    try:
        # running and listening for jobs before the database goes: a worker still starting on a
        # loaded machine would meet a stopped database at its start, not lose it while running
        until(lambda: "Starting worker on" in worker.log())
        time.sleep(1)
        _service("stop", "postgresql")
        time.sleep(3)
        _service("start", "postgresql")
        assert worker.process.poll() is None, worker.log()[-4000:]
        checked = until(lambda: _checked_after_restart(database, server, key, monitor["id"]))
        [got] = receiver.wait("reinicio", 1)
        assert got.headers["webhook-id"] == checked["entrega_id"]
        assert got.verified is True
        assert worker.process.poll() is None
    finally:
        log = worker.stop(clean=False)
    assert "database unavailable" in log


def test_worker_starts_again_when_its_listener_cannot_reconnect(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    database: str,
    monitored_alias: str,
) -> None:
    """When the connection it listens on for new jobs breaks and a new one cannot be opened
    (what a killed PostgreSQL does to an idle worker), the queue's worker stops without an
    error; the process starts it again instead of exiting, and goes on delivering."""
    key = make_key()
    monitor = create_monitor(server, key, receiver, "escuta", SAMPLE_CNPJ)["monitor"]
    worker = Worker(monitored_alias)
    try:
        until(lambda: _listeners(database) or None)
        name = conninfo_to_dict(database)["dbname"]
        maintenance = make_conninfo(database, dbname="postgres")
        with psycopg.connect(maintenance, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
            try:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND query ILIKE 'LISTEN%%'",
                    (name,),
                )
                until(lambda: "Stopped worker on" in worker.log() or None)  # the queue's
            finally:
                conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
        checked = until(lambda: _checked_after_restart(database, server, key, monitor["id"]))
        [got] = receiver.wait("escuta", 1)
        assert got.headers["webhook-id"] == checked["entrega_id"]
        assert worker.process.poll() is None, worker.log()[-4000:]
    finally:
        log = worker.stop(clean=False)
    assert "database unavailable (the queue's listener stopped)" in log


def _listeners(database: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query ILIKE 'LISTEN%'"
        ).fetchone()
    return row[0] if row else 0


def _checked_after_restart(
    database: str, server: Server, key: object, monitor_id: int
) -> dict[str, object] | None:
    """`force_change` once the API's pool has its connections back (the first request after a
    restart may meet a broken pooled connection: a 503 with the error body, which has no
    `alterado`)."""
    try:
        return force_change(database, server, key, monitor_id)  # type: ignore[arg-type]
    except (AssertionError, KeyError, psycopg.OperationalError, ValueError):
        return None


def test_worker_of_an_alias_without_release_waits_quietly(
    database: str, workers: list[Worker]
) -> None:
    """Before the first load the alias does not exist: the worker's safety net that records
    live releases finds nothing to record, and says nothing about it."""
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM procrastinate_jobs").fetchone()
    start = row[0] if row else 0
    workers.append(Worker(f"test-sem-release-{time.monotonic_ns()}"))

    def reconciled() -> bool:
        with psycopg.connect(database) as conn:
            found = conn.execute(
                "SELECT count(*) FROM procrastinate_jobs WHERE id > %s "
                "AND task_name = 'conciliar_releases' AND status = 'succeeded'",
                (start,),
            ).fetchone()
        return bool(found and found[0])

    until(reconciled, seconds=30)


def test_check_of_a_release_dropped_before_it_ran_ends(
    monitored_alias: str, workers: list[Worker], database: str
) -> None:
    """A release check whose index is gone (`indexer drop` before the check ran) ends with
    nothing checked; it used to fail on the missing index and be retried every 10 minutes."""
    gone = f"{monitored_alias}-gone-{uuid.uuid4().hex[:8]}"

    async def defer() -> None:
        # A queue app of its own: the worker module's app keeps the pool it was opened with.
        deferring = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=database))
        async with deferring.open_async():
            await releases.defer_check(deferring, monitored_alias, gone)

    asyncio.run(defer())
    worker = Worker(monitored_alias)
    workers.append(worker)

    def status() -> str | None:
        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT status FROM procrastinate_jobs WHERE args->>'indice' = %s", (gone,)
            ).fetchone()
        return None if row is None or row[0] in ("todo", "doing") else str(row[0])

    assert until(status) == "succeeded"
    assert f"release {gone} is gone" in worker.log()
