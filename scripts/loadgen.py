"""Open-loop load generator shared by the API benchmarks.

Requests start on a fixed schedule whatever the answers' latency, so a slow server shows up as
latency instead of hiding behind a lower rate. Prints the achieved rate, status counts and
p50/p95/p99/max latency in milliseconds.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import aiohttp

MakeRequest = Callable[[aiohttp.ClientSession, random.Random], Any]
"""Given the session and a seeded generator, start one request (`session.get(...)`...)."""


async def open_loop(make: MakeRequest, rate: float, seconds: float, label: str) -> list[float]:
    """Send `rate` requests per second for `seconds`; print and return the latencies (ms)."""
    latencies: list[float] = []
    statuses: Counter[int | str] = Counter()
    rng = random.Random(1)
    connector = aiohttp.TCPConnector(limit=512)
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> None:
            started = time.perf_counter()
            try:
                async with make(session, rng) as response:
                    await response.read()
                    statuses[response.status] += 1
            except (aiohttp.ClientError, TimeoutError) as error:
                statuses[type(error).__name__] += 1
                return
            latencies.append((time.perf_counter() - started) * 1000)

        total = int(rate * seconds)
        start = time.perf_counter()
        tasks = []
        for n in range(total):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one()))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    print(f"{label}: requests {total} in {elapsed:.1f} s ({total / elapsed:.0f} req/s), "
          f"statuses {dict(statuses)}")  # fmt: skip
    print(
        f"latency ms: p50 {quantiles[49]:.2f}  p95 {quantiles[94]:.2f}  "
        f"p99 {quantiles[98]:.2f}  max {max(latencies, default=0):.2f}"
    )
    return latencies
