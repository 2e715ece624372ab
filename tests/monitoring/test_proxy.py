"""Deliveries ignore proxies from the environment (a proxy would make the connection in the
service's stead and bypass the connect-time address check): an API process and a worker whose
`HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` name a recording proxy on loopback deliver straight
to the receiver, and the proxy sees nothing. A client that does trust the environment goes
to that proxy: the control that shows the environment would have taken effect."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import aiohttp
import pytest

from tests.conftest import MakeKey, serving
from tests.monitoring.conftest import api_env, create_monitor, force_change
from tests.peers import Receiver, Worker

SAMPLE_CNPJ = "57815224000179"
STOP_POLL = 0.2


class RecordingProxy:
    """A TCP listener on loopback standing for an HTTP proxy: it keeps the first bytes of
    every connection made to it and answers `502 Bad Gateway`."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        self._listener.settimeout(STOP_POLL)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.seen: list[bytes] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(5)
                self.seen.append(connection.recv(4096))
                connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

    def environment(self) -> dict[str, str]:
        names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
        found = dict.fromkeys([*names, *(name.lower() for name in names)], self.url)
        return found | {"NO_PROXY": "", "no_proxy": ""}

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(5)
        self._listener.close()


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    running = RecordingProxy()
    yield running
    running.stop()


def test_environment_proxy_is_used_by_a_client_that_trusts_it(
    proxy: RecordingProxy, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in proxy.environment().items():
        monkeypatch.setenv(name, value)

    async def attempt() -> int:
        async with (
            aiohttp.ClientSession(trust_env=True) as session,
            session.post(receiver.url("via-proxy"), data=b"{}") as answer,
        ):
            return answer.status

    assert asyncio.run(attempt()) == 502
    assert receiver.of("via-proxy") == []
    [request] = proxy.seen
    assert request.startswith(f"POST {receiver.url('via-proxy')} ".encode())


def test_deliveries_ignore_environment_proxies(
    monitored_alias: str,
    make_key: MakeKey,
    receiver: Receiver,
    database: str,
    proxy: RecordingProxy,
) -> None:
    env = proxy.environment()
    key = make_key()
    with serving(monitored_alias, env={**api_env(), **env}) as server:
        monitor = create_monitor(server, key, receiver, "sem-proxy", SAMPLE_CNPJ)["monitor"]
        with server.client(headers=key.headers) as client:
            tested = client.post(f"/v1/me/monitoramentos/{monitor['id']}/testar").json()
        assert (tested["ok"], tested["status_http"]) == (True, 200)
        worker = Worker(monitored_alias, **env)
        try:
            checked = force_change(database, server, key, monitor["id"])
            got = receiver.wait("sem-proxy", 2)
        finally:
            worker.stop()
    assert [item.event["type"] for item in got] == ["monitor.teste", "empresa.alterada"]
    assert [item.headers["webhook-id"] for item in got] == [
        tested["entrega_id"],
        checked["entrega_id"],
    ]
    assert all(item.verified for item in got)
    assert proxy.seen == []
