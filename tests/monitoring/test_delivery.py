"""Deliveries through the worker to a real receiver that verifies every signature: test events,
retries until delivered, `Retry-After`, `410 Gone`, persistent failure, re-sending, the log of
every attempt, and the address policy applied when the connection is made."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from app.webhooks import delivery
from app.webhooks.addresses import networks_of
from tests.conftest import Issued, MakeKey, Server
from tests.loopback import LoopbackApp
from tests.monitoring.conftest import create_monitor, force_change, log_of
from tests.peers import Receiver, Worker, until

SAMPLE_CNPJ = "57815224000179"
SECRET = "whsec_" + "A" * 44
BASE = "/v1/me/monitoramentos"


def _monitor(server: Server, key: Issued, monitor_id: int) -> dict[str, Any]:
    with server.client(headers=key.headers) as client:
        found: dict[str, Any] = client.get(f"{BASE}/{monitor_id}").json()
    return found


def test_test_event_signed_delivered_and_logged(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    key = make_key()
    monitor = create_monitor(server, key, receiver, "teste", SAMPLE_CNPJ)["monitor"]
    with server.client(headers=key.headers) as client:
        answer = client.post(f"{BASE}/{monitor['id']}/testar").json()
    assert answer["ok"] is True
    assert answer["status_http"] == 200
    [got] = receiver.of("teste")
    assert got.verified is True
    assert got.headers["webhook-id"] == answer["entrega_id"]
    assert got.event["type"] == "monitor.teste"
    assert got.event["data"]["cnpj"] == SAMPLE_CNPJ
    [attempt] = log_of(server, key, monitor=monitor["id"])
    assert (attempt["evento"], attempt["tentativa"], attempt["status_http"]) == (
        "monitor.teste",
        1,
        200,
    )


def test_change_delivered_after_failures_same_id_every_attempt_logged(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    key = make_key()
    receiver.plan("falhas", (500, {}, 0), (502, {}, 0))
    monitor = create_monitor(server, key, receiver, "falhas", SAMPLE_CNPJ)["monitor"]
    checked = force_change(database, server, key, monitor["id"])
    got = receiver.wait("falhas", 3)
    assert {item.headers["webhook-id"] for item in got} == {checked["entrega_id"]}
    assert all(item.verified for item in got)
    event = got[-1].event
    assert event["type"] == "empresa.alterada"
    assert event["data"]["mudancas"] == [
        {
            "campo": "razao_social",
            "antes": "NOME ANTIGO LTDA",
            "depois": checked["mudancas"][0]["depois"],
        }
    ]
    attempts = until(
        lambda: (
            len(log_of(server, key, monitor=monitor["id"])) == 3
            and log_of(server, key, monitor=monitor["id"])
        )
    )
    assert [(a["tentativa"], a["status_http"]) for a in reversed(attempts)] == [
        (1, 500),
        (2, 502),
        (3, 200),
    ]
    assert attempts[0]["entrega_estado"] == "entregue"
    assert attempts[-1]["proxima_em"] is not None
    assert log_of(server, key, monitor=monitor["id"], ok="false")[0]["erro"] == "HTTP 502"


def test_retry_after_honoured(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    key = make_key()
    receiver.plan("espere", (429, {"Retry-After": "3"}, 0))
    monitor = create_monitor(server, key, receiver, "espere", SAMPLE_CNPJ)["monitor"]
    force_change(database, server, key, monitor["id"])
    started = time.monotonic()
    first, second = receiver.wait("espere", 2)
    assert time.monotonic() - started >= 3  # the schedule alone would wait 0.5 s
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert int(second.headers["webhook-timestamp"]) - int(first.headers["webhook-timestamp"]) >= 2


def test_gone_pauses_monitor_no_retry(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    key = make_key()
    receiver.plan("sumiu", (410, {}, 0))
    monitor = create_monitor(server, key, receiver, "sumiu", SAMPLE_CNPJ)["monitor"]
    force_change(database, server, key, monitor["id"])
    paused = until(lambda: (m := _monitor(server, key, monitor["id"]))["estado"] == "pausado" and m)
    assert "410" in paused["motivo_pausa"]
    time.sleep(1.5)
    assert len(receiver.of("sumiu")) == 1


def test_persistent_failure_pauses_monitor_then_resend_delivers(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    key = make_key()
    receiver.plan("quebrado", *[(503, {}, 0)] * 4, (200, {}, 1.5))  # the 5th answers slowly
    monitor = create_monitor(server, key, receiver, "quebrado", SAMPLE_CNPJ)["monitor"]
    checked = force_change(database, server, key, monitor["id"])
    paused = until(lambda: (m := _monitor(server, key, monitor["id"]))["estado"] == "pausado" and m)
    assert "4 tentativas" in paused["motivo_pausa"]
    assert len(receiver.of("quebrado")) == 4
    with server.client(headers=key.headers) as client:
        path = f"{BASE}/logs/{checked['entrega_id']}/reenviar"
        assert client.post(path).status_code == 400  # paused: resume first
        client.patch(f"{BASE}/{monitor['id']}", json={"estado": "ativo"})
        resent = client.post(path)
        assert resent.status_code == 202
        assert resent.json() == {
            "entrega_id": checked["entrega_id"],
            "monitor_id": monitor["id"],
            "evento": "empresa.alterada",
            "estado": "pendente",
            "tentativas_anteriores": 4,
        }
        receiver.wait("quebrado", 5)
        assert client.post(path).status_code == 409  # on its way: one round at a time
    got = receiver.wait("quebrado", 5)
    assert got[-1].headers["webhook-id"] == checked["entrega_id"]
    assert got[-1].verified is True
    delivered = until(lambda: log_of(server, key, monitor=monitor["id"], ok="true"))
    assert delivered[0]["tentativa"] == 5  # the numbering goes on across rounds
    assert delivered[0]["entrega_estado"] == "entregue"
    with server.client(headers=key.headers) as client:
        sent_again = client.post(path)  # a delivered event can be sent again
        assert (sent_again.status_code, sent_again.json()["tentativas_anteriores"]) == (202, 5)
    again = receiver.wait("quebrado", 6)
    assert again[-1].headers["webhook-id"] == checked["entrega_id"]


def test_connect_time_check_refuses_loopback_when_not_allowed(receiver: Receiver) -> None:
    """The address is checked on the connection itself: `localhost` resolves to loopback,
    which a worker without allowed networks refuses, whatever was checked when it was saved."""

    async def attempt(networks: list[Any]) -> delivery.Resultado:
        async with delivery.client(networks, timeout=5) as session:
            url = receiver.url("rebind").replace("127.0.0.1", "localhost")
            return await delivery.send(session, url, "whsec_" + "A" * 44, "msg_1", '{"a": 1}')

    refused = asyncio.run(attempt([]))
    assert refused.status is None
    assert "não permitido" in (refused.erro or "")
    assert receiver.of("rebind") == []

    allowed = asyncio.run(attempt(networks_of("127.0.0.0/8,::1/128")))
    assert allowed.ok


def test_a_host_that_does_not_resolve_is_said_in_the_subscribers_words() -> None:
    """Deliveries resolve through c-ares (aiodns): a name that is not found is said as such,
    not as an unreachable endpoint."""

    async def attempt() -> delivery.Resultado:
        async with delivery.client(networks_of("127.0.0.0/8"), timeout=5) as session:
            url = "http://nao-existe.invalid/hook"
            return await delivery.send(session, url, "whsec_" + "A" * 44, "m", "{}")

    outcome = asyncio.run(attempt())
    assert outcome.status is None
    assert outcome.erro == "o nome do endpoint não foi encontrado (DNS)"


def test_redirects_not_followed(receiver: Receiver) -> None:
    receiver.plan("redireciona", (307, {"Location": "http://169.254.169.254/latest"}, 0))

    async def attempt() -> delivery.Resultado:
        async with delivery.client(networks_of("127.0.0.0/8"), timeout=5) as session:
            return await delivery.send(
                session, receiver.url("redireciona"), "whsec_" + "A" * 44, "m", "{}"
            )

    outcome = asyncio.run(attempt())
    assert outcome.status == 307
    assert not outcome.ok


def _send_once(
    serve: Callable[[socket.socket], None] | None, timeout: float = 5
) -> delivery.Resultado:
    """One delivery to a raw endpoint on loopback: `serve` handles its one connection (None:
    nothing listens on the port)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    thread = None
    if serve is None:
        listener.close()
    else:
        listener.listen()

        def accept() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                serve(connection)

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()

    async def attempt() -> delivery.Resultado:
        async with delivery.client(networks_of("127.0.0.0/8"), timeout=timeout) as session:
            return await delivery.send(session, url, "whsec_" + "A" * 44, "m", "{}")

    try:
        return asyncio.run(attempt())
    finally:
        if thread is not None:
            thread.join(timeout)
            listener.close()


def test_endpoint_hanging_up_is_a_failed_attempt() -> None:
    """An endpoint that accepts the connection and closes it without answering: a failed
    attempt that names what happened, no exception out of the delivery."""
    outcome = _send_once(lambda connection: None)
    assert outcome.status is None
    assert not outcome.ok
    assert outcome.erro == "o endpoint fechou a conexão sem responder"


def test_endpoint_refusing_connections_named_in_portuguese() -> None:
    """No library's text reaches the delivery log: a closed port is 'conexão recusada'."""
    outcome = _send_once(None)
    assert (outcome.status, outcome.erro) == (None, "conexão recusada pelo endpoint")


def test_endpoint_answering_without_end_read_only_in_part() -> None:
    """An endpoint that answers 200 with an endless body: the attempt succeeds, and the worker
    reads a bounded part of it and hangs up instead of holding it all in memory."""
    sent = [0]

    def flood(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        chunk = b"x" * 65536
        try:
            while sent[0] < 1024 * 2**20:
                connection.sendall(chunk)
                sent[0] += len(chunk)
        except OSError:
            pass

    outcome = _send_once(flood, timeout=30)
    assert outcome.ok
    assert sent[0] < 64 * 2**20, sent[0]  # a gigabyte offered, a few socket buffers taken


def test_origin_pause_doubles_up_to_its_bound_however_long_it_fails() -> None:
    """An endpoint that never answers, for days: its pause stays `MAX_PAUSE` (the doubling
    once overflowed a float after 1,025 failures, and every attempt after it crashed)."""
    assert delivery.pause_after(1, 10) == 10
    assert delivery.pause_after(3, 10) == 40
    for failures in (6, 1_025, 10**6):
        assert delivery.pause_after(failures, 10) == delivery.MAX_PAUSE


def test_endpoint_stalling_after_its_status_has_answered() -> None:
    """A 200 whose body never ends arriving: delivered (its status counts), read for
    `DRAIN` seconds at most, not a timeout to retry."""

    def stall(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok")
        time.sleep(4)

    outcome = _send_once(stall, timeout=10)
    assert (outcome.status, outcome.erro) == (200, None)
    assert outcome.ok


def test_endpoint_address_aiohttp_refuses_named_in_portuguese() -> None:
    async def attempt() -> delivery.Resultado:
        async with delivery.client([], timeout=5) as session:
            return await delivery.send(
                session, "https://134744072/", "whsec_" + "A" * 44, "m", "{}"
            )

    outcome = asyncio.run(attempt())
    assert (outcome.status, outcome.erro) == (None, "endereço do endpoint inválido")


def test_monitor_removed_while_its_test_is_sent_answers_the_test(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    """The test goes out, the monitor is deleted before the endpoint answers: the test's
    answer still comes (200, the attempt), with nothing left to log it under (was a 500)."""
    key = make_key()
    monitor = create_monitor(server, key, receiver, "removido", SAMPLE_CNPJ)["monitor"]
    receiver.plan("removido", (200, {}, 5.0))  # the deletion lands while it waits
    answers: list[Any] = []

    def run_test() -> None:
        with server.client(headers=key.headers, timeout=30) as client:
            answers.append(client.post(f"{BASE}/{monitor['id']}/testar"))

    thread = threading.Thread(target=run_test)
    thread.start()
    receiver.wait("removido", 1)
    with server.client(headers=key.headers) as client:
        assert client.delete(f"{BASE}/{monitor['id']}").status_code == 204
    thread.join(30)
    [answer] = answers
    assert answer.status_code == 200, answer.text
    assert (answer.json()["ok"], answer.json()["status_http"]) == (True, 200)
    assert log_of(server, key) == []


def test_event_cancelled_by_a_pause_shows_in_the_log_and_is_resent(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    """An event still to be tried when its monitor is paused is cancelled with a row in the log
    (an event postponed before any attempt had none, so its id was nowhere to re-send it)."""
    key = make_key()
    receiver.plan("pausa", (503, {"Retry-After": "10"}, 0))  # time to pause before the retry
    monitor = create_monitor(server, key, receiver, "pausa", SAMPLE_CNPJ)["monitor"]
    checked = force_change(database, server, key, monitor["id"])
    receiver.wait("pausa", 1)
    with server.client(headers=key.headers) as client:
        client.patch(f"{BASE}/{monitor['id']}", json={"estado": "pausado"})
    rows = until(lambda: [r for r in log_of(server, key) if r["tentativa"] == 2], seconds=30)
    assert (rows[0]["entrega_id"], rows[0]["status_http"]) == (checked["entrega_id"], None)
    assert rows[0]["erro"] == "não enviada: o monitoramento foi pausado"
    assert rows[0]["entrega_estado"] == "cancelada"
    assert len(receiver.of("pausa")) == 1  # nothing was sent for it
    with server.client(headers=key.headers) as client:
        client.patch(f"{BASE}/{monitor['id']}", json={"estado": "ativo"})
        path = f"{BASE}/logs/{checked['entrega_id']}/reenviar"
        assert client.post(path).status_code == 202
    assert receiver.wait("pausa", 2)[-1].headers["webhook-id"] == checked["entrega_id"]


def test_test_event_re_sent_is_tried_once_and_pauses_nothing(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker
) -> None:
    """A test event re-sent goes through the worker, and is still a test: a `410 Gone` there
    is logged, not retried, and leaves the monitor active."""
    key = make_key()
    monitor = create_monitor(server, key, receiver, "teste-de-novo", SAMPLE_CNPJ)["monitor"]
    with server.client(headers=key.headers) as client:
        tested = client.post(f"{BASE}/{monitor['id']}/testar").json()
        receiver.plan("teste-de-novo", (410, {}, 0))
        path = f"{BASE}/logs/{tested['entrega_id']}/reenviar"
        assert client.post(path).status_code == 202
    rows = until(lambda: [r for r in log_of(server, key) if r["tentativa"] == 2])
    assert (rows[0]["status_http"], rows[0]["entrega_estado"]) == (410, "falhou")
    assert _monitor(server, key, monitor["id"])["estado"] == "ativo"
    assert len(receiver.of("teste-de-novo")) == 2


class _Endpoint(LoopbackApp):
    """An endpoint on loopback that answers 200."""

    def routes(self, app: web.Application) -> None:
        async def ok(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        app.router.add_post("/hook", ok)


def test_sender_forgets_idle_origins_past_its_bound() -> None:
    """A worker that sent to more endpoints than it keeps the state of forgets the idle ones:
    its memory does not grow with every endpoint it ever saw. Each delivery still goes out."""
    endpoints = [_Endpoint() for _ in range(5)]
    for endpoint in endpoints:
        endpoint.start()

    async def deliver() -> tuple[list[bool], int]:
        sender = delivery.Sender(networks_of("127.0.0.0/8"), timeout=5, per_origin=1,
                                 max_origins=2)  # fmt: skip
        try:
            outcomes = [
                (await sender.send(f"http://127.0.0.1:{e.port}/hook", SECRET, "m", "{}")).ok
                for e in endpoints
            ]
            return outcomes, len(sender)
        finally:
            await sender.close()

    try:
        outcomes, kept = asyncio.run(deliver())
    finally:
        for endpoint in endpoints:
            endpoint.stop()
    assert outcomes == [True] * 5
    assert kept <= 2


def test_an_accounts_tests_in_flight_are_bounded(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    """A test goes out at once and its caller waits for the endpoint: an account's third test
    while two wait on a slow endpoint is a 429 at once, and the next one after them goes."""
    key, other = make_key(), make_key()
    monitor = create_monitor(server, key, receiver, "lento", SAMPLE_CNPJ)["monitor"]
    elsewhere = create_monitor(server, other, receiver, "lento-outro", SAMPLE_CNPJ)["monitor"]
    receiver.plan("lento", (200, {}, 3.0), (200, {}, 3.0))
    answers: list[Any] = []

    def run_test() -> None:
        with server.client(headers=key.headers, timeout=30) as client:
            answers.append(client.post(f"{BASE}/{monitor['id']}/testar"))

    threads = [threading.Thread(target=run_test) for _ in range(2)]
    for thread in threads:
        thread.start()
    receiver.wait("lento", 2)
    with server.client(headers=key.headers) as client:
        started = time.monotonic()
        third = client.post(f"{BASE}/{monitor['id']}/testar")
        waited = time.monotonic() - started
    assert third.status_code == 429, third.text
    assert third.headers["Retry-After"] == "10"
    assert "2 testes" in third.json()["message"]
    assert waited < 2.0  # refused at once, not after the endpoint's answer
    with server.client(headers=other.headers) as client:  # another account is not held
        assert client.post(f"{BASE}/{elsewhere['id']}/testar").json()["ok"] is True
    for thread in threads:
        thread.join(30)
    assert [a.status_code for a in answers] == [200, 200]
    with server.client(headers=key.headers) as client:
        assert client.post(f"{BASE}/{monitor['id']}/testar").json()["ok"] is True
    assert len(receiver.of("lento")) == 3
