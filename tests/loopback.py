"""An aiohttp application served on loopback from a thread of its own, for the peers the tests
and benchmarks talk to (webhook receivers, a web folder of releases). Self-contained, so
scripts can use it without the test suite's fixtures."""

from __future__ import annotations

import asyncio
import socket
import threading

from aiohttp import web


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class LoopbackApp:
    """Subclasses add their routes in `routes`; the server starts in `start()`."""

    def __init__(self) -> None:
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        self.routes(app)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        self._loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())
        self._loop.close()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
