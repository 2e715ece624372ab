"""Peers the worker talks to and the worker itself, for the tests of monitoring and lots: a
real HTTP receiver on loopback that verifies every Standard Webhooks signature, and
`registry-worker` in a subprocess."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.conftest import ROOT
from tests.loopback import LoopbackApp

WORKER = ROOT / ".venv" / "bin" / "registry-worker"
FAST_RETRIES = "0.5,0.5,0.5"


@dataclass
class Received:
    name: str
    headers: dict[str, str]
    body: bytes
    verified: bool | None
    """Whether the signature checked with the secret the test gave for `name` (None: none)."""
    at: float = field(default_factory=time.monotonic)
    """When the request arrived (`time.monotonic()`)."""

    @property
    def event(self) -> dict[str, Any]:
        found: dict[str, Any] = msgspec.json.decode(self.body)
        return found


@dataclass
class Plan:
    """How the receiver answers `name`: these answers in order, then 200."""

    answers: list[tuple[int, dict[str, str], float]] = field(default_factory=list)


class Receiver(LoopbackApp):
    """An aiohttp server in a thread: `POST /hook/<name>`, answers by plan, records all."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[str, str] = {}
        self.plans: dict[str, Plan] = {}
        self.received: list[Received] = []
        self.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/hook/{name}"

    def plan(self, name: str, *answers: tuple[int, dict[str, str], float]) -> None:
        self.plans[name] = Plan(list(answers))

    def of(self, name: str) -> list[Received]:
        return [item for item in self.received if item.name == name]

    def wait(self, name: str, count: int, seconds: float = 30) -> list[Received]:
        deadline = time.monotonic() + seconds
        while len(self.of(name)) < count:
            assert time.monotonic() < deadline, f"{len(self.of(name))} of {count} for {name}"
            time.sleep(0.05)
        return self.of(name)

    async def _handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = await request.read()
        headers = dict(request.headers)
        verified = None
        if name in self.secrets:
            try:
                Webhook(self.secrets[name]).verify(body, headers)
                verified = True
            except WebhookVerificationError:
                verified = False
        self.received.append(Received(name, headers, body, verified))
        plan = self.plans.get(name)
        if plan and plan.answers:
            status, extra, delay = plan.answers.pop(0)
            if delay:
                await asyncio.sleep(delay)
            return web.Response(status=status, headers=extra, text="plan")
        return web.Response(status=200, text="ok")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/hook/{name}", self._handle)


class Worker:
    """`registry-worker` in a subprocess, its output in a file."""

    def __init__(self, alias: str, **env: str) -> None:
        self.log_file = tempfile.NamedTemporaryFile(prefix="worker-", suffix=".log", delete=False)  # noqa: SIM115
        environment = {
            **os.environ, "INDEX_ALIAS": alias, "WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8",
            "WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_RETRY_DELAYS": FAST_RETRIES,
            "WEBHOOK_TIMEOUT": "10", "WORKER_HEARTBEAT": "1", "WORKER_STALLED_AFTER": "3",
            "WORKER_CONCURRENCY": "4", **env,
        }  # fmt: skip
        self.process = subprocess.Popen(
            [str(WORKER)], cwd=ROOT, env=environment, stdout=self.log_file, stderr=subprocess.STDOUT
        )

    def log(self) -> str:
        return Path(self.log_file.name).read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL: no cleanup, no deregistration; its running jobs stay `doing`."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, *, clean: bool = True) -> str:
        """Stops it (SIGTERM) and returns its log; `clean`: asserting no traceback in it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()
        log = self.log()
        if clean:
            assert "Traceback" not in log, log[-8000:]
        return log


def until(check: Callable[[], Any], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """A webhook receiver for the module's tests."""
    running = Receiver()
    yield running
    running.stop()
