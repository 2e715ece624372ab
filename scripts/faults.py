"""Dependencies killed one at a time under load, the worker killed mid-delivery, the app stopped
with SIGTERM: what callers saw in each phase, how long recovery took, and whether everything
accepted arrived.

    bash scripts/services.sh up; eval "$(bash scripts/services.sh env)"; . scripts/secret.sh
    .venv/bin/python scripts/faults.py [--rate 40] [--monitors 2000] [--down 8] [--json F]

Runs in a database and an alias of its own (removed at the end) on the services of
`scripts/services.sh`: loads the sample, creates `--monitors` monitors delivering to a receiver
on loopback that verifies every signature, serves the app (two workers) and one
`registry-worker`, asks for three lead lots, then sends lookups, searches, agent tool calls
(`consultar_cnpj`) and validations at `--rate` per second while it, in turn:

1. kills Elasticsearch (SIGKILL), waits `--down` seconds, starts it again;
2. the same with Redis;
3. loads a second release (every trade name changed: one event per monitor), kills the worker
   once deliveries have begun and starts another;
4. kills PostgreSQL while the deliveries go on, and starts it again;
5. sends SIGTERM to the app while requests are in flight.

A request fails when it gets a 5xx other than a 503 with `Retry-After` and a JSON body, or no
answer in 10 s; requests started after the SIGTERM are not counted (the app no longer accepts
them). After each restart the script measures the seconds until a request that needs the
dependency is answered again, and `/v1/status` saying it is down. At the end it counts the audit
rows of the key against the requests the app answered, the deliveries against the monitors, and
the lots done. Figures in docs/resilience.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.accounts import service as accounts  # noqa: E402
from app.accounts.keys import check_secret  # noqa: E402
from app.settings import get_settings  # noqa: E402
from indexer import elastic  # noqa: E402
from scripts.bench_webhooks import make_monitors, receiver_stats, releases  # noqa: E402
from scripts.loadgen import schedule_until  # noqa: E402
from scripts.scratch import drop_database, free_port, fresh_database, wait_port  # noqa: E402

SERVICES = ["bash", str(ROOT / "scripts" / "services.sh")]
DATABASE = "registry_faults"
ALIAS = "faults"
PLAN = "faults"
KINDS = ("lookup", "search", "tool", "validate")
NEEDS = {"elasticsearch": "search", "redis": "validate", "postgresql": "monitors"}
"""The request each dependency's recovery is timed with: searches read Elasticsearch, every
keyed call draws from Redis's window, the monitor list reads PostgreSQL."""


def service(action: str, name: str) -> str:
    done = subprocess.run([*SERVICES, action, name], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"services.sh {action} {name}: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


async def issue_key(database: str, email: str) -> tuple[str, str]:
    """A key (and its id) of a new account on the script's plan."""
    secret = check_secret(get_settings().api_key_secret)
    async with await psycopg.AsyncConnection.connect(database) as conn:
        conta, _ = await accounts.ensure_account(
            conn, nome="Faults", email=email, telefone="", plano=PLAN, papel="usuario"
        )
        issued = await accounts.issue_key(conn, secret, conta.id, "faults", [])
    return issued.api_key, issued.chave.id


# ---------------------------------------------------------------- traffic


@dataclass
class Outcome:
    phase: str
    kind: str
    outcome: str
    """The status, or the error's name."""
    ms: float
    retry_after: bool
    json_body: bool
    after_stop: bool
    """Started after the app was told to stop."""
    shed: bool = False
    """A 503 of the process's own load shedding (`app.lib.shedding`), given before the call
    is identified, so never audited; other 503s name the dependency that is down."""


@dataclass
class Traffic:
    url: str
    key: str
    cnpjs: list[str]
    words: list[str]
    rate: float
    phase: str = "baseline"
    stopping: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    samples: dict[str, list[str]] = field(default_factory=dict)
    """Per phase and kind (`phase / kind`), the bodies of its first two answers other than 200."""
    _stop: bool = False

    def request(self, kind: str, rng: random.Random) -> tuple[str, str, bytes | None]:
        cnpj = rng.choice(self.cnpjs)
        if kind == "lookup":
            return "GET", f"/v1/cnpj/{cnpj}", None
        if kind == "search":
            return "GET", f"/search?q={rng.choice(self.words)}", None
        if kind == "validate":
            return "GET", f"/v1/cnpj/validar/{cnpj}", None
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "consultar_cnpj", "arguments": {"cnpj": cnpj}}}  # fmt: skip
        return "POST", "/mcp", json.dumps(call).encode()

    async def run(self) -> None:
        rng = random.Random(11)
        headers = {
            "Authorization": f"Bearer {self.key}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:

            async def request(n: int) -> None:
                kind = KINDS[n % len(KINDS)]
                await self._one(session, kind, *self.request(kind, rng))

            await schedule_until(lambda: self._stop, self.rate, request)

    async def _one(
        self, session: aiohttp.ClientSession, kind: str, method: str, path: str, data: bytes | None
    ) -> None:
        phase, after_stop = self.phase, self.stopping
        started = time.perf_counter()
        retry_after = json_body = shed = False
        try:
            async with session.request(method, self.url + path, data=data) as response:
                body = await response.read()
                outcome = str(response.status)
                retry_after = response.headers.get("Retry-After", "").isdigit()
                json_body = response.content_type == "application/json" and body[:1] == b"{"
                shed = response.status == 503 and b"sobrecarregado" in body
                if response.status != 200:
                    sample = self.samples.setdefault(f"{phase} / {kind}", [])
                    if len(sample) < 2:
                        sample.append(f"{response.status} {body[:240].decode(errors='replace')}")
        except TimeoutError:
            outcome = "timeout"
        except aiohttp.ClientError as error:
            outcome = type(error).__name__
        elapsed = (time.perf_counter() - started) * 1000
        self.outcomes.append(
            Outcome(phase, kind, outcome, elapsed, retry_after, json_body, after_stop, shed)
        )

    def stop(self) -> None:
        self._stop = True


def failed(outcome: Outcome) -> bool:
    """Not an answer a client can act on: a 5xx other than a JSON 503 with `Retry-After`, or
    no answer at all (refusals of requests started after the stop excepted)."""
    if outcome.after_stop:
        return outcome.outcome.startswith("5") and outcome.outcome.isdigit()
    if not outcome.outcome.isdigit():
        return True
    if outcome.outcome == "503":
        return not (outcome.retry_after and outcome.json_body)
    return outcome.outcome.startswith("5")


@dataclass
class PhaseFigures:
    sent: int = 0
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per kind of request, the count of each status (or error)."""
    failed: int = 0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    max_503_ms: float = 0.0
    """The slowest 503: how long a caller waited to be told to come back."""
    p99_by_kind_ms: dict[str, float] = field(default_factory=dict)


def figures(outcomes: list[Outcome]) -> dict[str, PhaseFigures]:
    phases: dict[str, PhaseFigures] = {}
    latencies: dict[str, list[float]] = {}
    kind_latencies: dict[tuple[str, str], list[float]] = {}
    for outcome in outcomes:
        kind_latencies.setdefault((outcome.phase, outcome.kind), []).append(outcome.ms)
        phase = phases.setdefault(outcome.phase, PhaseFigures())
        phase.sent += 1
        by_kind = phase.outcomes.setdefault(outcome.kind, {})
        by_kind[outcome.outcome] = by_kind.get(outcome.outcome, 0) + 1
        phase.failed += failed(outcome)
        latencies.setdefault(outcome.phase, []).append(outcome.ms)
        if outcome.outcome == "503":
            phase.max_503_ms = round(max(phase.max_503_ms, outcome.ms), 1)
    for name, found in latencies.items():
        found.sort()
        phases[name].p50_ms = round(found[len(found) // 2], 1)
        phases[name].p99_ms = _p99(found)
    for (name, kind), found in kind_latencies.items():
        phases[name].p99_by_kind_ms[kind] = _p99(sorted(found))
    return phases


def _p99(ordered: list[float]) -> float:
    return round(ordered[min(int(len(ordered) * 0.99), len(ordered) - 1)], 1)


# ---------------------------------------------------------------- probes


async def until(check: Callable[[], Awaitable[bool]], seconds: float) -> float | None:
    """Seconds until `check()` holds (None when it did not within `seconds`)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if await check():
            return round(time.monotonic() - started, 2)
        await asyncio.sleep(0.1)
    return None


async def _status(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    try:
        async with session.get(f"{url}/v1/status") as response:
            found: dict[str, Any] = await response.json()
            return found
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return {}


async def _down_in_status(session: aiohttp.ClientSession, url: str, name: str) -> bool:
    found = await _status(session, url)
    return bool(found.get("dependencies", {}).get(name, {}).get("status") == "down")


async def _answers(session: aiohttp.ClientSession, url: str, key: str, name: str) -> bool:
    """Whether the request that needs `name` is answered 200 now."""
    path = {
        "search": "/search?q=comercio",
        "validate": "/v1/cnpj/validar/11222333000181",
        "monitors": "/v1/me/monitoramentos",
    }[NEEDS[name]]
    try:
        headers = {"Authorization": f"Bearer {key}"}
        async with session.get(url + path, headers=headers) as response:
            await response.read()
            return response.status == 200
    except (aiohttp.ClientError, TimeoutError):
        return False


async def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@dataclass
class Fault:
    name: str
    seconds_to_status_down: float | None = None
    """From the kill to `/v1/status` naming the dependency down."""
    seconds_to_return: float = 0.0
    """From the restart command to the dependency answering (Elasticsearch: yellow)."""
    seconds_to_service: float | None = None
    """From the dependency's return to the app answering what needs it, without a restart."""


async def outage(traffic: Traffic, name: str, down: float, settle: float, probe_key: str) -> Fault:
    """`name` killed, `down` seconds, started again; the probes use a key of their own (so the
    traffic's key's audit rows are the traffic's)."""
    fault = Fault(name)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3)) as session:
        pid = int(service("pid", name))
        # From the signal until the process is gone (milliseconds; longer for a large heap) a
        # request may still be answered by the dependency it reached in time: that moment is
        # a phase of its own, and the outage's starts once the process is gone.
        traffic.phase = f"{name} killed"
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        await until(lambda: _gone(pid), 10)
        traffic.phase = f"{name} down"
        fault.seconds_to_status_down = await until(
            lambda: _down_in_status(session, traffic.url, name), 30
        )
        await asyncio.sleep(max(down - (time.monotonic() - killed), 0))
        # While it starts, a request may reach it already: a phase of its own too.
        traffic.phase = f"{name} starting"
        restarted = time.monotonic()
        await asyncio.to_thread(service, "start", name)
        if name == "elasticsearch":
            es = elastic.connect(get_settings().elasticsearch_url)
            await asyncio.to_thread(es.cluster.health, wait_for_status="yellow", timeout="120s")
            es.close()
        fault.seconds_to_return = round(time.monotonic() - restarted, 2)
        traffic.phase = f"{name} back"
        fault.seconds_to_service = await until(
            lambda: _answers(session, traffic.url, probe_key, name), 60
        )
        await asyncio.sleep(settle)
    return fault


# ---------------------------------------------------------------- processes


@dataclass
class Report:
    rate: float
    phases: dict[str, PhaseFigures]
    faults: list[Fault]
    failed_requests: int
    answered_by_app: int
    """Requests of the key the app answered (any status, the shed ones excepted)."""
    audit_rows: int
    monitors: int
    delivered_at_worker_kill: int
    delivered_at_postgresql_kill: int
    deliveries_unique: int
    deliveries_duplicate: int
    bad_signatures: int
    lots_asked: int
    lots_done: int
    in_flight_at_stop_answered: str
    """Requests started before the SIGTERM and answered, of those started before it in the last
    second."""
    samples: dict[str, list[str]] = field(default_factory=dict)
    """The first answers other than 200 per phase and kind of request (status and body)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=Options.rate, help="Requests per second.")
    parser.add_argument("--monitors", type=int, default=Options.monitors)
    parser.add_argument("--down", type=float, default=Options.down, help="Seconds down.")
    parser.add_argument("--settle", type=float, default=Options.settle, help="Seconds after.")
    parser.add_argument("--json", type=Path, help="Write the figures as JSON here.")
    args = parser.parse_args()
    report = run(Options(args.rate, args.monitors, args.down, args.settle))
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=2) + "\n")
    whole = (
        report.failed_requests == 0
        and report.audit_rows == report.answered_by_app
        and report.deliveries_unique == report.monitors
        and report.lots_done == report.lots_asked
    )
    sys.exit(0 if whole else 1)


class Stack:
    """A database and an alias of their own, loaded with the sample, monitors over it
    delivering to a receiver on loopback, the app and a worker (`scripts/reindex.py` uses it
    too)."""

    def __init__(self, monitors: int, database: str = DATABASE, alias: str = ALIAS) -> None:
        settings = get_settings()
        self.base_database = settings.database_url
        self.database_name = database
        self.alias = alias
        self.database = fresh_database(
            settings.database_url, database, (PLAN, 100_000_000, 1_000_000)
        )
        self.workdir = Path(tempfile.mkdtemp(prefix="faults-"))
        self.es = elastic.connect(settings.elasticsearch_url)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.env = {
            **os.environ, "DATABASE_URL": self.database, "INDEX_ALIAS": alias,
            "LOTS_DIR": str(self.workdir / "lotes"), "RECORDS_DIR": str(self.workdir / "registros"),
            "REDIS_PREFIX": "faults:", "REQUEST_TIMEOUT": "2", "HEALTH_TIMEOUT": "1",
            "WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "WEBHOOK_ALLOW_HTTP": "true",
            "WEBHOOK_RETRY_DELAYS": "1,1,2,2,5,5,10",
        }  # fmt: skip
        self.log = (self.workdir / "processes.log").open("wb")
        self.first, self.second = releases(self.workdir)
        self.load(self.first)
        self.port = free_port()
        secrets = asyncio.run(make_monitors(self.database, monitors, self.port, alias=alias))
        secrets_file = self.workdir / "secrets.json"
        secrets_file.write_text(json.dumps(secrets))
        self.receiver = self._start(
            [sys.executable, str(ROOT / "scripts" / "bench_webhooks.py"), "--receive",
             str(self.port), str(secrets_file)],
        )  # fmt: skip
        app_port = free_port()
        self.url = f"http://127.0.0.1:{app_port}"
        self.app = self._start(
            [str(ROOT / ".venv" / "bin" / "registry-api"), "--port", str(app_port),
             "--workers", "2"],
        )  # fmt: skip
        wait_port(app_port, self.app, "the app")
        wait_port(self.port, self.receiver, "the receiver")
        self.worker = self.start_worker()
        self.key, self.key_id = asyncio.run(issue_key(self.database, "faults@example.com"))
        self.lots_key, _ = asyncio.run(issue_key(self.database, "faults-lots@example.com"))
        hits = self.es.search(index=alias, size=300, source_includes=["cnpj", "razao_social"])
        self.cnpjs = [hit["_source"]["cnpj"] for hit in hits["hits"]["hits"]]
        self.words = sorted(
            {
                word.lower()
                for hit in hits["hits"]["hits"]
                for word in str(hit["_source"]["razao_social"]).split()
                if len(word) > 3 and word.isalpha()
            }
        ) or ["comercio"]

    def load_command(self, release: Path) -> list[str]:
        return [str(ROOT / ".venv" / "bin" / "indexer"), "load", "--alias", self.alias,
                str(release)]  # fmt: skip

    def load(self, release: Path) -> None:
        subprocess.run(self.load_command(release), env=self.env, check=True, capture_output=True)

    def _start(self, command: list[str]) -> subprocess.Popen[bytes]:
        started = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        self.processes.append(started)
        return started

    def start_worker(self) -> subprocess.Popen[bytes]:
        return self._start([str(ROOT / ".venv" / "bin" / "registry-worker")])

    def deliveries(self) -> dict[str, Any]:
        return receiver_stats(self.port) if self.receiver.poll() is None else {}

    def stop(self) -> dict[str, Any]:
        """Stops every process; what the receiver got."""
        stats = self.deliveries()
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        self.log.close()
        return stats

    def remove(self) -> None:
        for info in elastic.list_indices(self.es, self.alias):
            elastic.delete_release(self.es, info.name)
        self.es.close()
        drop_database(self.base_database, self.database_name)
        shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass
class Scenario:
    faults: list[Fault]
    lots_asked: int
    lots_done: int
    delivered_at_worker_kill: int
    delivered_at_postgresql_kill: int


@dataclass(frozen=True)
class Options:
    rate: float = 40
    """Requests per second."""
    monitors: int = 2000
    down: float = 8
    """Seconds each dependency stays down."""
    settle: float = 5
    """Seconds of traffic after each recovery."""


async def scenario(stack: Stack, traffic: Traffic, args: Options) -> Scenario:
    lots = await ask_lots(stack.url, stack.lots_key, 3)
    running = asyncio.create_task(traffic.run())
    faults = []
    await asyncio.sleep(args.settle)
    for name in ("elasticsearch", "redis"):
        faults.append(await outage(traffic, name, args.down, args.settle, stack.lots_key))

    # The worker: a release with one event per monitor, killed once deliveries began.
    traffic.phase = "release, worker killed"
    await asyncio.to_thread(stack.load, stack.second)
    await until(lambda: received_at_least(stack.port, 1), 120)
    at_worker_kill = int((await asyncio.to_thread(stack.deliveries))["unique"])
    stack.worker.send_signal(signal.SIGKILL)
    await asyncio.to_thread(stack.worker.wait)
    await asyncio.sleep(2)
    stack.worker = await asyncio.to_thread(stack.start_worker)
    traffic.phase = "worker back"
    await asyncio.sleep(args.settle)
    # PostgreSQL while the deliveries go on.
    at_postgresql_kill = int((await asyncio.to_thread(stack.deliveries))["unique"])
    faults.append(await outage(traffic, "postgresql", args.down, args.settle, stack.lots_key))
    traffic.phase = "deliveries finish"
    await until(lambda: received_at_least(stack.port, args.monitors), 600)
    done = await _lots_done(stack.database, lots, 120)

    # SIGTERM with requests in flight.
    traffic.phase = "app stopping"
    await asyncio.sleep(1)
    stack.app.send_signal(signal.SIGTERM)
    traffic.stopping = True
    await asyncio.to_thread(stack.app.wait, 60)
    traffic.stop()
    await running
    return Scenario(faults, len(lots), done, at_worker_kill, at_postgresql_kill)


def run(args: Options) -> Report:
    stack = Stack(args.monitors)
    try:
        traffic = Traffic(stack.url, stack.key, stack.cnpjs, stack.words, args.rate)
        try:
            done = asyncio.run(scenario(stack, traffic, args))
        finally:
            stats = stack.stop()
        audit_rows = _audit_rows(stack.database, stack.key_id)
    finally:
        stack.remove()
    outcomes = traffic.outcomes
    stopping = [o for o in outcomes if o.phase == "app stopping" and not o.after_stop]
    in_flight = f"{sum(o.outcome == '200' for o in stopping)} of {len(stopping)}"
    return Report(
        rate=args.rate,
        phases=figures(outcomes),
        faults=done.faults,
        failed_requests=sum(failed(o) for o in outcomes),
        answered_by_app=sum(1 for o in outcomes if o.outcome.isdigit() and not o.shed),
        audit_rows=audit_rows,
        monitors=args.monitors,
        delivered_at_worker_kill=done.delivered_at_worker_kill,
        delivered_at_postgresql_kill=done.delivered_at_postgresql_kill,
        deliveries_unique=int(stats.get("unique", 0)),
        deliveries_duplicate=int(stats.get("received", 0)) - int(stats.get("unique", 0)),
        bad_signatures=int(stats.get("bad_signatures", 0)),
        lots_asked=done.lots_asked,
        lots_done=done.lots_done,
        in_flight_at_stop_answered=in_flight,
        samples=traffic.samples,
    )


async def received_at_least(port: int, count: int) -> bool:
    stats = await asyncio.to_thread(receiver_stats, port)
    return int(stats["unique"]) >= count


async def ask_lots(url: str, key: str, count: int) -> list[int]:
    body = {"uf": "SP", "quantidade": 20, "formato": "csv", "confirmar_lgpd": True,
            "uso_responsavel": True}  # fmt: skip
    found = []
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        for _ in range(count):
            async with session.post(f"{url}/v1/me/lotes", json=body) as response:
                created = await response.json()
                if response.status != 201:
                    raise RuntimeError(f"lot refused: {response.status} {created}")
                found.append(int(created["lote"]["id"]))
    return found


async def _lots_done(database: str, ids: list[int], seconds: float) -> int:
    async def count() -> int:
        async with await psycopg.AsyncConnection.connect(database) as conn:
            cursor = await conn.execute(
                "SELECT count(*) FROM lotes WHERE id = ANY(%s) AND estado = 'concluido'", (ids,)
            )
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def all_done() -> bool:
        return await count() == len(ids)

    await until(all_done, seconds)
    return await count()


def _audit_rows(database: str, key_id: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM auditoria WHERE chave_id = %s", (key_id,)
        ).fetchone()
    return int(row[0]) if row else 0


def print_report(report: Report) -> None:
    print(f"{report.rate:g} requests/s: lookups, searches, tool calls, validations in turn")
    print(f"  {'phase':<24} {'sent':>5} {'failed':>6} {'p50':>7} {'p99':>8} {'max 503':>8} ms")
    for name, phase in report.phases.items():
        print(f"  {name:<24} {phase.sent:>5} {phase.failed:>6} {phase.p50_ms:>7} "
              f"{phase.p99_ms:>8} {phase.max_503_ms:>8}")  # fmt: skip
        for kind, counts in sorted(phase.outcomes.items()):
            print(f"      {kind:<9} p99 {phase.p99_by_kind_ms[kind]:>7} ms  {counts}")
    for fault in report.faults:
        print(f"{fault.name}: /v1/status said down {fault.seconds_to_status_down} s after the "
              f"kill; back {fault.seconds_to_return} s after the restart command; service "
              f"{fault.seconds_to_service} s after its return")  # fmt: skip
    print(f"failed requests: {report.failed_requests}")
    print(f"audit rows {report.audit_rows} of {report.answered_by_app} requests answered")
    print(f"deliveries {report.deliveries_unique} of {report.monitors} monitors "
          f"({report.deliveries_duplicate} repeated, "
          f"{report.bad_signatures} bad signatures)")  # fmt: skip
    print(f"  delivered when the worker was killed: {report.delivered_at_worker_kill}, "
          f"when PostgreSQL was: {report.delivered_at_postgresql_kill}")  # fmt: skip
    print(f"lots done {report.lots_done} of {report.lots_asked}")
    print(f"in flight at the SIGTERM, answered: {report.in_flight_at_stop_answered}")
    for where, bodies in report.samples.items():
        print(f"  {where}: {bodies[0]}")


if __name__ == "__main__":
    main()
