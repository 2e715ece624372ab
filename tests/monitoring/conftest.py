"""Monitoring against real parts: the API and `registry-worker` processes, a real HTTP receiver
on loopback that verifies every Standard Webhooks signature, and releases loaded into a real
index."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.conftest import ROOT, SAMPLE, Issued, Loader, Server, _free_port, serving

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


class Receiver:
    """An aiohttp server in a thread: `POST /hook/<name>`, answers by plan, records all."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.secrets: dict[str, str] = {}
        self.plans: dict[str, Plan] = {}
        self.received: list[Received] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)

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

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/hook/{name}", self._handle)
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


def api_env() -> dict[str, str]:
    return {"WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "WEBHOOK_ALLOW_HTTP": "true"}


@pytest.fixture(scope="module", autouse=True)
def own_monitors(database: str) -> Iterator[None]:
    """Removes the module's monitors when it ends: every check looks at every active monitor,
    and the next module's releases are not this module's business."""
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM monitores").fetchone()
    yield
    with psycopg.connect(database) as conn:
        conn.execute("DELETE FROM monitores WHERE id > %s", (row[0] if row else 0,))


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def monitored_alias(load: Loader, new_alias: Callable[[], str]) -> str:
    alias = new_alias()
    load(SAMPLE, alias)
    return alias


@pytest.fixture(scope="module")
def server(monitored_alias: str) -> Iterator[Server]:
    with serving(monitored_alias, env=api_env()) as running:
        yield running


@pytest.fixture(scope="module")
def worker(monitored_alias: str) -> Iterator[Worker]:
    running = Worker(monitored_alias)
    yield running
    running.stop()


def create_monitor(
    server: Server, key: Issued, receiver: Receiver, name: str, cnpj: str, **fields: Any
) -> dict[str, Any]:
    with server.client(headers=key.headers) as client:
        response = client.post(
            "/v1/me/monitoramentos",
            json={"cnpj": cnpj, "webhook_url": receiver.url(name), **fields},
        )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    receiver.secrets[name] = created["segredo"]
    return created


def until(check: Callable[[], Any], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def log_of(server: Server, key: Issued, **params: Any) -> list[dict[str, Any]]:
    with server.client(headers=key.headers) as client:
        response = client.get("/v1/me/monitoramentos/logs", params=params)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def force_change(database: str, server: Server, key: Issued, monitor_id: int) -> dict[str, Any]:
    """Makes the monitor's baseline an older record (another legal name), then asks for the
    check: the live record differs, so an `empresa.alterada` event is raised."""
    age_baselines(database, [monitor_id])
    with server.client(headers=key.headers) as client:
        answer = client.post(f"/v1/me/monitoramentos/{monitor_id}/verificar")
    checked: dict[str, Any] = answer.json()
    assert checked["alterado"] is True
    assert checked["entrega_id"]
    return checked


def age_baselines(database: str, monitor_ids: list[int]) -> None:
    """Gives monitors a baseline with another legal name, as if the last release had one."""
    with psycopg.connect(database) as conn:
        conn.execute(
            "UPDATE monitores SET referencia = jsonb_set(referencia, '{razao_social}', "
            "'\"NOME ANTIGO LTDA\"'), referencia_hash = 'antigo' WHERE id = ANY(%s)",
            (monitor_ids,),
        )
