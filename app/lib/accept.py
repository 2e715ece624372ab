"""An event loop whose servers take every waiting connection at once.

uvloop runs on libuv, and libuv accepts one connection per turn of the event loop (libuv pull
request 3696, to spread connections between processes). A worker under load turns its loop every
5-10 ms, so when hundreds of clients connect at once (a load that arrives at once, clients that
reconnect after a restart) the connections wait in the listen queue and take it 100-200 a second
per worker: measured on the lookups at 8,000 a second (`docs/api.md`), a thousand connections
waited up to 3.8 s before their first request was read, answered or refused. asyncio's own
servers take up to their backlog on each turn; this loop keeps uvloop for everything else and
serves a listening socket the same way: each time it is readable, up to `BATCH` connections are
taken and handed to uvloop's transports (`loop.connect_accepted_socket`).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvloop

logger = logging.getLogger(__name__)

BATCH = 100
"""Connections taken per turn of the loop at most: the workers share the listening socket and
each wakes when it is readable, so a bounded batch leaves the other workers their share."""

RETRY_AFTER = 1.0
"""Seconds before taking connections again when the process is out of descriptors or memory
(what asyncio's servers wait)."""

RESOURCE_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class Acceptor:
    """A listening socket served by the loop's readiness callbacks: the `asyncio.Server` that
    uvicorn holds (`close`, `wait_closed`, `sockets`)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        batch: int = BATCH,
    ) -> None:
        self._loop = loop
        self._sock = sock
        self._factory = protocol_factory
        self._batch = batch
        self._serving = True
        self._connecting: set[asyncio.Task[Any]] = set()
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._accept)

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return (self._sock,)

    def is_serving(self) -> bool:
        return self._serving

    def close(self) -> None:
        """Stop taking connections; the socket is its owner's to close (uvicorn closes it)."""
        if self._serving:
            self._serving = False
            self._loop.remove_reader(self._sock.fileno())

    async def wait_closed(self) -> None:
        """Wait for the connections being set up; the open ones are the protocol's to end."""
        if self._connecting:
            await asyncio.wait(set(self._connecting))

    def _accept(self) -> None:
        for _ in range(self._batch):
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # the client gave up while it waited: nothing to serve
            except OSError as error:
                if error.errno not in RESOURCE_ERRORS:
                    raise
                logger.error("accepting connections paused for %.0f s: %s", RETRY_AFTER, error)
                self._loop.remove_reader(self._sock.fileno())
                self._loop.call_later(RETRY_AFTER, self._resume)
                return
            conn.setblocking(False)
            task = self._loop.create_task(self._loop.connect_accepted_socket(self._factory, conn))
            self._connecting.add(task)
            task.add_done_callback(functools.partial(self._connected, conn))

    def _connected(self, conn: socket.socket, task: asyncio.Task[Any]) -> None:
        self._connecting.discard(task)
        if not task.cancelled() and task.exception() is not None:
            conn.close()  # reset before it was set up: the client is gone

    def _resume(self) -> None:
        if self._serving:
            self._loop.add_reader(self._sock.fileno(), self._accept)


class EagerAcceptLoop(uvloop.Loop):
    """uvloop, except that a server on a given plain socket takes connections in batches."""

    async def create_server(
        self,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        host: Any = None,
        port: Any = None,
        *,
        sock: socket.socket | None = None,
        ssl: Any = None,
        **options: Any,
    ) -> Any:
        if sock is None or ssl is not None or sock.type != socket.SOCK_STREAM:
            return await super().create_server(
                protocol_factory, host, port, sock=sock, ssl=ssl, **options
            )
        sock.listen(options.get("backlog", 100))  # a bound socket listens once served
        return Acceptor(self, sock, protocol_factory)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvicorn's loop factory (`loop="app.lib.accept:new_event_loop"`)."""
    return EagerAcceptLoop()
