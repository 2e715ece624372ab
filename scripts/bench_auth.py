"""What the access layer costs: Bearer check (PostgreSQL), rate limit (Redis) and audit
(queued, written in the background), per request, against the same route without it.

    .venv/bin/python scripts/bench_auth.py [--rate 200] [--seconds 20] [--workers 2]

Starts the app twice under uvicorn on the services of the environment (`DATABASE_URL`,
`REDIS_URL`...): `create_app()` as served, and `create_app(protected=False)` (the factory
below; not reachable from any setting). Each gets the same open-loop load from this process,
`GET /v1/cnpj/validar/{cnpj}` (no Elasticsearch) at a fixed rate with the Bearer key of a bench
account whose plan row allows the whole run, in alternating slices (`--rounds`), so a drift in
the machine's background load falls on both alike. Prints p50/p99 in µs of both and the
difference.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core import create_app  # noqa: E402
from scripts.loadgen import bench_key, schedule  # noqa: E402

PATH = "/v1/cnpj/validar/11222333000181"


def unprotected_app() -> object:
    """The app without the access middleware (`uvicorn --factory`)."""
    return create_app(protected=False)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(target: list[str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", *target, "--port", str(port), "--workers",
         str(workers), "--no-access-log", "--log-level", "warning"],
        cwd=ROOT, env={**os.environ, "REDIS_PREFIX": f"bench-{secrets.token_hex(4)}:"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            time.sleep(1)
            return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("server did not start")


async def load(url: str, key: str, rate: float, seconds: float) -> list[float]:
    latencies: list[float] = []
    failures = 0
    headers = {"Authorization": f"Bearer {key}"}
    connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(record: bool) -> None:
            nonlocal failures
            started = time.perf_counter()
            async with session.get(url + PATH) as response:
                await response.read()
                if response.status != 200:
                    failures += 1
            if record:
                latencies.append((time.perf_counter() - started) * 1e6)

        warmup = int(rate * 2)
        await schedule(warmup + int(rate * seconds), rate, lambda n: one(n >= warmup))
    if failures:
        raise SystemExit(f"{failures} requests did not answer 200")
    return latencies


def report(name: str, latencies: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(latencies, n=100)
    print(f"{name:<12} n={len(latencies)}  p50 {q[49]:8.0f} µs  p99 {q[98]:8.0f} µs")
    return q[49], q[98]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=20, help="of load on each app")
    parser.add_argument("--rounds", type=int, default=4, help="alternations between the apps")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    key = bench_key()
    targets = {
        "without": ["bench_auth:unprotected_app", "--factory", "--app-dir", str(ROOT / "scripts")],
        "with": ["app.asgi:app"],
    }
    servers = {name: serve(target, args.workers) for name, target in targets.items()}
    latencies: dict[str, list[float]] = {name: [] for name in targets}
    try:
        for _ in range(args.rounds):
            for name, (_, url) in servers.items():
                slice_ = args.seconds / args.rounds
                latencies[name] += asyncio.run(load(url, key, args.rate, slice_))
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
    bare, full = report("without", latencies["without"]), report("with", latencies["with"])
    print(f"{'overhead':<12} p50 {full[0] - bare[0]:+8.0f} µs  p99 {full[1] - bare[1]:+8.0f} µs")


if __name__ == "__main__":
    main()
