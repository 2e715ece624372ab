"""The workers' event loop (`app.lib.accept`) takes a burst of connections within a few turns of
a busy loop, where uvloop's own servers take one per turn."""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import cast

import uvloop

from app.lib.accept import BATCH, Acceptor, EagerAcceptLoop

CLIENTS = 250
TURN = 0.02
"""Seconds each turn of the loop spends on other work, as a worker under load does."""


class Greeter(asyncio.Protocol):
    """Says hello to each connection and counts them."""

    made: list[asyncio.Transport]

    def __init__(self, made: list[asyncio.Transport]) -> None:
        self.made = made

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)  # uvloop's transports are not subclasses
        self.made.append(stream)
        stream.write(b"hello")


@contextmanager
def listening() -> Iterator[socket.socket]:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock


def _busy(loop: asyncio.AbstractEventLoop) -> None:
    """Work that holds each turn of the loop for `TURN` seconds."""
    time.sleep(TURN)
    loop.call_soon(_busy, loop)


def shut(
    loop: asyncio.AbstractEventLoop,
    server: asyncio.AbstractServer,
    made: list[asyncio.Transport],
    clients: list[socket.socket],
) -> None:
    """Close the server, its connections and the clients, and let the loop finish closing."""
    server.close()
    for transport in made:
        transport.close()
    for client in clients:
        client.close()
    loop.run_until_complete(server.wait_closed())
    loop.run_until_complete(asyncio.sleep(0.05))


def accepted_within(new_loop: Callable[[], asyncio.AbstractEventLoop], turns: int) -> int:
    """Connections a busy loop's server took in about `turns` turns, of `CLIENTS` waiting."""
    loop = new_loop()
    made: list[asyncio.Transport] = []
    try:
        with listening() as sock:
            server = loop.run_until_complete(
                loop.create_server(lambda: Greeter(made), sock=sock, backlog=CLIENTS)
            )
            address = sock.getsockname()
            # The kernel completes each connection before the server takes it.
            clients = [socket.create_connection(address) for _ in range(CLIENTS)]
            loop.call_soon(_busy, loop)
            loop.run_until_complete(asyncio.sleep(turns * TURN))
            taken = len(made)
            if made:
                clients[0].settimeout(5)
                assert clients[0].recv(5) == b"hello"  # the taken connections are served
            shut(loop, server, made, clients)
    finally:
        loop.close()
    return taken


def test_a_busy_worker_takes_a_burst_of_connections_in_a_few_turns() -> None:
    # 250 connections at 100 a turn: three turns; ten give room for a slow machine.
    assert accepted_within(EagerAcceptLoop, turns=10) == CLIENTS
    assert BATCH < CLIENTS  # the burst needed more than one turn: the batches are bounded


def test_uvloop_alone_takes_one_connection_per_turn() -> None:
    """The behaviour the loop exists for: if uvloop ever takes more, `app.lib.accept` can go."""
    assert accepted_within(uvloop.new_event_loop, turns=10) <= 2 * 10


def test_a_server_on_an_address_is_uvloops_own() -> None:
    loop = EagerAcceptLoop()
    try:
        server = loop.run_until_complete(
            loop.create_server(asyncio.Protocol, host="127.0.0.1", port=0)
        )
        assert not isinstance(server, Acceptor)  # libuv binds and serves it
        server.close()
        loop.run_until_complete(server.wait_closed())
    finally:
        loop.close()


def test_a_client_gone_before_it_was_taken_is_skipped() -> None:
    loop = EagerAcceptLoop()
    made: list[asyncio.Transport] = []
    try:
        with listening() as sock:
            server = loop.run_until_complete(
                loop.create_server(lambda: Greeter(made), sock=sock, backlog=8)
            )
            address = sock.getsockname()
            gone = socket.create_connection(address)
            gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            gone.close()  # reset while it waits in the queue
            staying = socket.create_connection(address)
            staying.settimeout(5)
            loop.run_until_complete(asyncio.sleep(0.2))
            assert staying.recv(5) == b"hello"
            shut(loop, server, made, [staying])
    finally:
        loop.close()


OUT_OF_DESCRIPTORS = """
import asyncio, logging, os, resource, socket, sys
from app.lib.accept import EagerAcceptLoop

logging.basicConfig(level=logging.INFO)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)
print(sock.getsockname()[1], flush=True)
sys.stdin.readline()  # the clients are waiting in the queue now


class Hello(asyncio.Protocol):
    def connection_made(self, transport):
        transport.write(b"hello")
        transport.close()


loop = EagerAcceptLoop()
loop.run_until_complete(asyncio.sleep(0.05))  # the loop's own descriptors are open now
used = {int(fd) for fd in os.listdir("/proc/self/fd")}
free = [fd for fd in range(1 << 16) if fd not in used][:3]  # room for three connections or so
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (free[-1] + 1, hard))
server = loop.run_until_complete(loop.create_server(Hello, sock=sock, backlog=64))
loop.run_until_complete(asyncio.sleep(float(sys.argv[1])))
"""


def test_out_of_descriptors_it_pauses_and_takes_the_rest_later() -> None:
    """Out of file descriptors, the loop stops taking connections for a second (as asyncio's
    servers do) instead of spinning on the error, then serves the ones still waiting."""
    clients = 10
    with subprocess.Popen(
        [sys.executable, "-c", OUT_OF_DESCRIPTORS, "6"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as child:  # fmt: skip
        assert child.stdout is not None
        assert child.stdin is not None
        port = int(child.stdout.readline())
        waiting = [socket.create_connection(("127.0.0.1", port)) for _ in range(clients)]
        child.stdin.write("go\n")
        child.stdin.flush()
        greeted = 0
        for client in waiting:
            client.settimeout(10)
            greeted += client.recv(5) == b"hello"
            client.close()
        _, errors = child.communicate(timeout=30)
    assert greeted == clients
    assert "accepting connections paused for 1 s" in errors
    assert "Traceback" not in errors
