"""One endpoint's failures never delay the others: a worker whose slots could all be taken by
deliveries to an endpoint that never answers in time still delivers to the other endpoints at
once (deliveries to one origin in flight are bounded, and an origin that stopped answering is
left alone for a while, its jobs postponed without spending their attempts)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import MakeKey, Server
from tests.monitoring.conftest import age_baselines, create_monitor
from tests.peers import Receiver, Worker, until

SAMPLE_CNPJ = "57815224000179"
TIMEOUT = 5.0
SLOW = 10
GOOD = 3


@pytest.fixture
def slow_receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.stop()


def test_slow_endpoint_does_not_delay_others(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    slow_receiver: Receiver,
    monitored_alias: str,
    database: str,
) -> None:
    keys = [make_key(), make_key()]
    slow_names = [f"lento-{n}" for n in range(SLOW)]
    for name in slow_names:  # each first attempt answered after the timeout
        slow_receiver.plan(name, (200, {}, TIMEOUT + 3))
    # The slow endpoint's monitors come first: their jobs are the first the worker takes.
    ids = [
        create_monitor(server, keys[n % 2], slow_receiver, name, SAMPLE_CNPJ)["monitor"]["id"]
        for n, name in enumerate(slow_names)
    ]
    good_names = [f"rapido-{n}" for n in range(GOOD)]
    ids += [
        create_monitor(server, keys[0], receiver, name, SAMPLE_CNPJ)["monitor"]["id"]
        for name in good_names
    ]
    worker = Worker(monitored_alias, WEBHOOK_TIMEOUT=str(TIMEOUT), WORKER_CONCURRENCY="4")
    try:
        age_baselines(database, ids)
        with server.client(headers=make_key(papel="admin").headers) as admin:
            assert admin.post("/v1/admin/monitoramentos/run").json()["eventos"] >= len(ids)
        good = [receiver.wait(name, 1, seconds=30)[0] for name in good_names]
        slow = until(lambda: [item for name in slow_names for item in slow_receiver.of(name)])
        # Four slots, ten slow deliveries queued first: without the bound the fast endpoint
        # would wait for the slow ones to time out.
        first_timeout = min(item.at for item in slow) + TIMEOUT
        assert max(item.at for item in good) < first_timeout
        assert all(item.verified for item in good)
        in_flight_at_once = sum(1 for item in slow if item.at < first_timeout)
        assert in_flight_at_once <= 2, in_flight_at_once
    finally:
        worker.stop()
