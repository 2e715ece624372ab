"""What one event-loop turn writes to a connection sent in one piece (`app.lib.coalesce`):
writes leave together at the end of the turn, long answers are not held back, closing sends
what was gathered first, and uvicorn serves small, streamed, slow, empty and failed answers
through it on kept-alive connections."""

from __future__ import annotations

import asyncio
import select
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from app.lib.coalesce import FLUSH_BYTES, GatheringHttpTools, GatheringTransport


class Collector(asyncio.Protocol):
    """The receiving end of a loopback connection: every byte, and when it closed."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.arrived = asyncio.Event()
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.received += data
        self.arrived.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set_result(bytes(self.received))


async def _connected() -> tuple[GatheringTransport, Collector, asyncio.Server]:
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[Collector] = loop.create_future()

    def accept() -> Collector:
        collector = Collector()
        accepted.set_result(collector)
        return collector

    server = await loop.create_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    async with asyncio.timeout(5):
        collector = await accepted
    return GatheringTransport(transport), collector, server


async def _wait_for(collector: Collector, size: int) -> bytes:
    async with asyncio.timeout(5):
        while len(collector.received) < size:
            collector.arrived.clear()
            await collector.arrived.wait()
    return bytes(collector.received)


def test_one_turns_writes_leave_together_at_its_end() -> None:
    head, body = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n", b"{}"

    async def scenario() -> tuple[list[int], bytes]:
        transport, collector, server = await _connected()
        transport.write(head)
        transport.write(body)
        gathered = [transport.gathered]
        await asyncio.sleep(0)
        gathered.append(transport.gathered)
        received = await _wait_for(collector, len(head + body))
        transport.close()
        server.close()
        return gathered, received

    gathered, received = asyncio.run(scenario())
    assert gathered == [len(head + body), 0]
    assert received == head + body


def test_a_long_answer_is_not_held_back() -> None:
    chunk = bytes(range(256)) * (FLUSH_BYTES // 2 // 256)

    async def scenario() -> tuple[list[int], bytes]:
        transport, collector, server = await _connected()
        gathered = []
        for _ in range(3):
            transport.write(chunk)
            gathered.append(transport.gathered)
        received = await _wait_for(collector, 3 * len(chunk))
        transport.close()
        server.close()
        return gathered, received

    gathered, received = asyncio.run(scenario())
    assert gathered == [len(chunk), 0, len(chunk)]
    assert received == chunk * 3


def test_closing_sends_what_was_gathered_first() -> None:
    async def scenario() -> bytes:
        transport, collector, server = await _connected()
        transport.writelines([b"last ", b"words"])
        transport.close()
        async with asyncio.timeout(5):
            received = await collector.closed
        server.close()
        return received

    assert asyncio.run(scenario()) == b"last words"


STREAMED = [bytes([n]) * 10_000 for n in range(200)]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """`/small` echoes its query string; `/slow` waits between its head and body; `/empty`
    answers 304; `/broken` fails after its head; anything else streams 200 chunks of 10 kB."""
    assert scope["type"] == "http"
    path = scope["path"]
    if path in ("/small", "/slow"):
        body = scope["query_string"] or b"{}"
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if path == "/slow":
            await asyncio.sleep(0.5)
        await send({"type": "http.response.body", "body": body})
        return
    if path == "/empty":
        await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", b'"x"')]})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    if path == "/broken":
        raise RuntimeError("the app failed after its head")
    for chunk in STREAMED:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


@pytest.fixture(scope="module")
def gathering_server() -> Iterator[str]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, http=GatheringHttpTools, lifespan="off", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_uvicorn_serves_small_answers_on_a_kept_alive_connection(gathering_server: str) -> None:
    with httpx.Client(base_url=gathering_server) as client:
        answers = [client.get("/small", params={"n": str(n)}) for n in range(50)]
    assert [answer.status_code for answer in answers] == [200] * 50
    assert [answer.content for answer in answers] == [b"n=%d" % n for n in range(50)]
    assert {answer.headers["content-length"] for answer in answers[:10]} == {"3"}


def test_uvicorn_streams_a_long_answer_whole(gathering_server: str) -> None:
    async def stream() -> list[bytes]:
        async with (
            httpx.AsyncClient(base_url=gathering_server) as client,
            client.stream("GET", "/stream") as answer,
        ):
            assert answer.headers["transfer-encoding"] == "chunked"
            return [piece async for piece in answer.aiter_raw()]

    assert b"".join(asyncio.run(stream())) == b"".join(STREAMED)


def _raw(url: str, request: bytes) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    client = socket.create_connection((host, int(port)), timeout=5)
    client.sendall(request)
    return client


def _read_all(client: socket.socket) -> bytes:
    received = b""
    while piece := client.recv(65536):
        received += piece
    return received


def test_uvicorn_holds_nothing_past_the_turn(gathering_server: str) -> None:
    request = b"GET /slow?late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with _raw(gathering_server, request) as client:
        early, _, _ = select.select([client], [], [], 0.4)  # the app sleeps before its body
        head = client.recv(65536)
        rest = _read_all(client)
    assert early == [client]
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert head.endswith(b"\r\n\r\n")
    assert rest == b"late"


def test_uvicorn_answers_without_a_body_and_after_a_failure(gathering_server: str) -> None:
    with httpx.Client(base_url=gathering_server) as client:
        empty = client.get("/empty")
        assert (empty.status_code, empty.headers["etag"], empty.content) == (304, '"x"', b"")
        assert client.get("/small").content == b"{}"  # the connection kept alive after it
    with _raw(gathering_server, b"GET /broken HTTP/1.1\r\nHost: x\r\n\r\n") as client:
        received = _read_all(client)  # the head, then the connection closed
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert received.endswith(b"\r\n\r\n")
