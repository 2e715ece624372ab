"""A node of a two-node Elasticsearch cluster killed (SIGKILL) while reads run at a steady rate.

    bash scripts/services.sh up                       # PostgreSQL and Redis (keys, limits)
    .venv/bin/python scripts/failover.py [--rate 100] [--down 15] [--json report.json]

Starts the cluster (`scripts/services.sh cluster up`: node 1 master and data, node 2 data),
loads the sample release into it with two shards and one replica, serves the app against both
nodes, and runs lookups and searches at `--rate` per second through four phases: `before`,
`node down` (node 2 killed; until `--down` seconds have passed), `rejoining` (node 2 started,
until the cluster is green again) and `after`. It prints, per phase, the reads sent, answered and
failed with their latency, and the times the cluster took to turn yellow in `/v1/status` and to
be green again. Figures in docs/scaling.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer import elastic  # noqa: E402
from scripts.loadgen import bench_key, schedule_until  # noqa: E402
from scripts.scratch import free_port, wait_port  # noqa: E402

SERVICES = ["bash", str(ROOT / "scripts" / "services.sh")]
ALIAS = "empresas_cluster"


def cluster(*args: str, nice: int = 0) -> str:
    """`scripts/services.sh cluster ARGS` (at `nice` priority), its output."""
    command = [*SERVICES, "cluster", *args]
    if nice:
        command = ["nice", "-n", str(nice), *command]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"cluster {' '.join(args)}: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


def load_release(urls: str, alias: str, source: Path, shards: int, replicas: int) -> None:
    """`indexer load` into the cluster (no record store: every lookup reads the cluster), the
    releases of earlier runs dropped first."""
    es = elastic.connect(urls)
    try:
        for info in elastic.list_indices(es, alias):
            elastic.delete_release(es, info.name)
    finally:
        es.close()
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "indexer"), "load", str(source), "--alias", alias,
         "--shards", str(shards), "--replicas", str(replicas), "--no-records"],
        env={**os.environ, "ELASTICSEARCH_URL": urls}, cwd=ROOT, check=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def sample_reads(urls: str, alias: str, count: int = 200) -> tuple[list[str], list[str]]:
    """CNPJs to look up and words to search for, from the release."""
    es = elastic.connect(urls)
    try:
        found = es.search(index=alias, size=count, source_includes=["cnpj", "razao_social"])
        hits = found["hits"]["hits"]
    finally:
        es.close()
    cnpjs = [hit["_source"]["cnpj"] for hit in hits]
    words = sorted(
        {
            word.lower()
            for hit in hits
            for word in str(hit["_source"].get("razao_social") or "").split()
            if len(word) > 3 and word.isalpha()
        }
    )
    return cnpjs, words or ["comercio"]


@dataclass
class PhaseFigures:
    sent: int = 0
    answered: int = 0
    """Answered 200, at once or after one `Retry-After` wait."""
    after_retry: int = 0
    """Of those, refused first with 503 and `Retry-After` (an app process shedding load)."""
    failed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0


@dataclass
class Report:
    rate: float
    phases: dict[str, PhaseFigures]
    seconds_to_yellow: float | None
    """From the kill to `/v1/status` reporting the cluster yellow."""
    seconds_to_rejoin: float | None
    """From starting node 2 again to the cluster green."""
    status_seen: list[str]
    """Each distinct detail `/v1/status` gave for Elasticsearch, in order."""
    failures: list[str]
    """The first failed reads (phase, path, status and body)."""

    @property
    def failed_reads(self) -> int:
        return sum(phase.failed for phase in self.phases.values())


@dataclass
class Reads:
    """Lookups and searches started on a fixed schedule, each filed under the phase current
    when it started. A read refused with 503 and `Retry-After` is sent once more after that
    wait, as a client of the API does; it fails when it then gets anything but 200, or no
    answer within 10 s."""

    url: str
    key: str
    cnpjs: list[str]
    words: list[str]
    rate: float
    phase: str = "before"
    results: list[tuple[str, str, float, bool]] = field(default_factory=list)
    """Phase, outcome (the status, or the error), milliseconds, whether it was sent again."""
    failures: list[str] = field(default_factory=list)
    """The first failures: phase, path, status and body."""
    _stop: bool = False

    async def run(self) -> None:
        rng = random.Random(7)
        timeout = aiohttp.ClientTimeout(total=10)
        headers = {"Authorization": f"Bearer {self.key}"}
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:

            async def request(n: int) -> None:
                path = (
                    f"/v1/cnpj/{rng.choice(self.cnpjs)}"
                    if n % 2 == 0
                    else f"/search?q={rng.choice(self.words)}"
                )
                await self._one(session, path, self.phase)

            await schedule_until(lambda: self._stop, self.rate, request)

    async def _one(self, session: aiohttp.ClientSession, path: str, phase: str) -> None:
        started = time.perf_counter()
        outcome, wait = await self._get(session, path, phase)
        if wait is not None:
            await asyncio.sleep(wait)
            outcome, _ = await self._get(session, path, phase)
        elapsed = (time.perf_counter() - started) * 1000
        self.results.append((phase, outcome, elapsed, wait is not None))

    async def _get(
        self, session: aiohttp.ClientSession, path: str, phase: str
    ) -> tuple[str, float | None]:
        """The outcome, and the seconds of `Retry-After` when the read was shed (503)."""
        try:
            async with session.get(self.url + path) as response:
                body = await response.read()
                retry = response.headers.get("Retry-After", "")
        except TimeoutError:
            return "timeout", None
        except aiohttp.ClientError as error:
            return type(error).__name__, None
        if response.status == 503 and retry.isdigit():
            return "503", float(retry)
        if response.status != 200 and len(self.failures) < 10:
            self.failures.append(f"{phase} {path} {response.status} {body[:300]!r}")
        return str(response.status), None

    def stop(self) -> None:
        self._stop = True

    def figures(self) -> dict[str, PhaseFigures]:
        phases: dict[str, PhaseFigures] = {}
        latencies: dict[str, list[float]] = {}
        for phase, outcome, ms, retried in self.results:
            figures = phases.setdefault(phase, PhaseFigures())
            figures.sent += 1
            figures.outcomes[outcome] = figures.outcomes.get(outcome, 0) + 1
            if outcome == "200":
                figures.answered += 1
                figures.after_retry += retried
            else:
                figures.failed += 1
            latencies.setdefault(phase, []).append(ms)
        for phase, found in latencies.items():
            found.sort()
            at = [found[min(int(len(found) * q), len(found) - 1)] for q in (0.5, 0.95, 0.99)]
            figures = phases[phase]
            figures.p50_ms, figures.p95_ms, figures.p99_ms = (round(x, 1) for x in at)
            figures.max_ms = round(found[-1], 1)
        return phases


async def _elasticsearch_detail(session: aiohttp.ClientSession, url: str) -> str:
    try:
        async with session.get(f"{url}/v1/status") as response:
            body = await response.json()
        dependency = body["dependencies"]["elasticsearch"]
        return f"{dependency['status']}: {dependency.get('detail', '')}"
    except (aiohttp.ClientError, TimeoutError, KeyError, ValueError) as error:
        return f"no status ({type(error).__name__})"


async def _wait_status(
    session: aiohttp.ClientSession, url: str, prefix: str, seen: list[str], seconds: float
) -> float | None:
    """Seconds until the Elasticsearch detail of `/v1/status` starts with `prefix` (None when
    it did not within `seconds`); every distinct detail met joins `seen`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        detail = await _elasticsearch_detail(session, url)
        if not seen or seen[-1] != detail:
            seen.append(detail)
        if detail.startswith(prefix):
            return round(time.monotonic() - started, 2)
        await asyncio.sleep(0.2)
    return None


async def warm_up(url: str, key: str, cnpjs: list[str], words: list[str], count: int) -> None:
    """`count` reads, four at a time, before the measured run: nodes that have just started
    answer their first searches slowly (code not yet compiled by the JVM, caches empty)."""
    headers = {"Authorization": f"Bearer {key}"}
    paths = [f"/v1/cnpj/{cnpj}" for cnpj in cnpjs] + [f"/search?q={word}" for word in words]
    async with aiohttp.ClientSession(headers=headers) as session:

        async def reader(offset: int) -> None:
            for n in range(offset, count, 4):
                async with session.get(url + paths[n % len(paths)]) as response:
                    await response.read()

        await asyncio.gather(*(reader(offset) for offset in range(4)))


async def drive(
    url: str,
    key: str,
    cnpjs: list[str],
    words: list[str],
    *,
    rate: float = 100,
    before: float = 10,
    down: float = 15,
    after: float = 10,
) -> Report:
    """The four phases against the app at `url`, served by the running two-node cluster."""
    reads = Reads(url, key, cnpjs, words, rate)
    running = asyncio.create_task(reads.run())
    seen: list[str] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as status:
        await asyncio.sleep(before)
        reads.phase = "node down"
        killed = time.monotonic()
        await asyncio.to_thread(cluster, "kill", "2")
        to_yellow = await _wait_status(status, url, "up: cluster yellow", seen, 60)
        await asyncio.sleep(max(down - (time.monotonic() - killed), 0))
        reads.phase = "rejoining"
        restarted = time.monotonic()
        # On this one machine the restarted node's start-up (seconds of JIT and recovery on
        # every core) competes with the app for CPU, which separate machines do not: it runs
        # at a lower priority, so the reads measure the cluster, not the shared cores.
        await asyncio.to_thread(cluster, "start", "2", nice=10)
        green = await _wait_status(status, url, "up: cluster green", seen, 300)
        to_rejoin = None if green is None else round(time.monotonic() - restarted, 2)
        reads.phase = "after"
        await asyncio.sleep(after)
        reads.stop()
        await running
        await _elasticsearch_detail(status, url)
    return Report(rate, reads.figures(), to_yellow, to_rejoin, seen, reads.failures)


@contextlib.contextmanager
def app_on(urls: str, alias: str) -> Iterator[str]:
    """`registry-api` (two workers) serving `alias` from the cluster's nodes; its address."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="failover-app-", suffix=".log", delete=False)  # noqa: SIM115
    env = {**os.environ, "ELASTICSEARCH_URL": urls, "INDEX_ALIAS": alias, "FAST_LOOKUPS": "false"}
    process = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "registry-api"), "--port", str(port), "--workers", "2"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_port(port, process, f"the app (log: {log.name})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def print_report(report: Report) -> None:
    print(f"reads at {report.rate:g}/s (half lookups, half searches), per phase:")
    print(f"  {'phase':<10} {'sent':>6} {'answered':>8} {'(retried)':>9} {'failed':>6}"
          "   p50    p95    p99    max ms")  # fmt: skip
    for name, phase in report.phases.items():
        print(f"  {name:<10} {phase.sent:>6} {phase.answered:>8} {phase.after_retry:>9} "
              f"{phase.failed:>6} "
              f"{phase.p50_ms:>6} {phase.p95_ms:>6} {phase.p99_ms:>6} {phase.max_ms:>6}"
              + (f"   {phase.outcomes}" if phase.failed else ""))  # fmt: skip
    print(f"failed reads: {report.failed_reads}")
    print(f"/v1/status reported the cluster yellow {report.seconds_to_yellow} s after the kill")
    print(f"green again {report.seconds_to_rejoin} s after node 2 was started")
    print("status seen: " + " | ".join(report.status_seen))
    for failure in report.failures:
        print(f"  failed: {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=100, help="Reads per second.")
    parser.add_argument("--before", type=float, default=10, help="Seconds before the kill.")
    parser.add_argument("--down", type=float, default=15, help="Seconds node 2 stays down.")
    parser.add_argument("--after", type=float, default=10, help="Seconds after it rejoined.")
    parser.add_argument("--source", type=Path, default=ROOT / "fixtures" / "sample")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--warm-up", type=int, default=2000, help="Reads before the run.")
    parser.add_argument("--json", type=Path, help="Write the figures as JSON here.")
    parser.add_argument("--keep", action="store_true", help="Leave the cluster running.")
    args = parser.parse_args()
    urls = cluster("up").splitlines()[-1]
    try:
        load_release(urls, ALIAS, args.source, args.shards, 1)
        cnpjs, words = sample_reads(urls, ALIAS)
        key = bench_key()
        with app_on(urls, ALIAS) as url:
            asyncio.run(warm_up(url, key, cnpjs, words, args.warm_up))
            report = asyncio.run(
                drive(url, key, cnpjs, words, rate=args.rate, before=args.before,
                      down=args.down, after=args.after)
            )  # fmt: skip
    finally:
        if not args.keep:
            cluster("down")
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps({**asdict(report), "failed_reads": report.failed_reads},
                                        indent=2) + "\n")  # fmt: skip
    sys.exit(1 if report.failed_reads else 0)


if __name__ == "__main__":
    main()
