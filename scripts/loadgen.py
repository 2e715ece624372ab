"""Open-loop load generation shared by the API benchmarks, and the key they send.

Requests start on a fixed schedule whatever the answers' latency, so a slow server shows up as
latency instead of hiding behind a lower rate. `open_loop` prints the achieved rate, status
counts and p50/p95/p99/max latency in milliseconds.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.accounts import repository, service
from app.accounts.keys import check_secret
from app.lib.migrate import migrate
from app.settings import get_settings
from app.web.sessions import SESSION_COOKIE, Sessions

MakeRequest = Callable[[aiohttp.ClientSession, random.Random], Any]
"""Given the session and a seeded generator, start one request (`session.get(...)`...)."""
BENCH_PLAN = "bench"


async def schedule(
    total: int, rate: float, request: Callable[[int], Coroutine[Any, Any, None]]
) -> float:
    """Start `request(n)` for n in range(total) on a fixed schedule of `rate` per second,
    whatever the answers' latency; returns the seconds until the last one finished."""
    start = time.perf_counter()
    tasks = []
    for n in range(total):
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(request(n)))
    await asyncio.gather(*tasks)
    return time.perf_counter() - start


async def schedule_until(
    stopped: Callable[[], bool], rate: float, request: Callable[[int], Coroutine[Any, Any, None]]
) -> int:
    """Start `request(n)` for n = 0, 1... on a fixed schedule of `rate` per second until
    `stopped()`, whatever the answers' latency; waits for those in flight and returns how many
    were started."""
    tasks: set[asyncio.Task[None]] = set()
    start = time.perf_counter()
    n = 0
    while not stopped():
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(request(n))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        n += 1
    await asyncio.gather(*tasks)
    return n


async def open_loop(
    make: MakeRequest,
    rate: float,
    seconds: float,
    label: str,
    api_key: str | None = None,
    cookies: dict[str, str] | None = None,
    timeline: bool = False,
) -> list[float]:
    """Send `rate` requests per second for `seconds`; print and return the latencies (ms).
    `cookies`: a dashboard session instead of a key (the pages of `/busca`). `timeline`: also
    print, for each second of the schedule, the requests it started by status and their p95."""
    latencies: list[float] = []
    seconds_of: dict[int, list[tuple[int | str, float]]] = {}
    statuses: Counter[int | str] = Counter()
    by_status: dict[int, list[float]] = {}
    rng = random.Random(1)
    connector = aiohttp.TCPConnector(limit=512)
    timeout = aiohttp.ClientTimeout(total=10)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, headers=headers, cookies=cookies
    ) as session:

        async def one(n: int) -> None:
            started = time.perf_counter()
            second = seconds_of.setdefault(int(n / rate), [])
            try:
                async with make(session, rng) as response:
                    await response.read()
                    statuses[response.status] += 1
            except (aiohttp.ClientError, TimeoutError) as error:
                statuses[type(error).__name__] += 1
                second.append((type(error).__name__, 0.0))
                return
            latency = (time.perf_counter() - started) * 1000
            latencies.append(latency)
            by_status.setdefault(response.status, []).append(latency)
            second.append((response.status, latency))

        total = int(rate * seconds)
        elapsed = await schedule(total, rate, one)
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    print(f"{label}: requests {total} in {elapsed:.1f} s ({total / elapsed:.0f} req/s), "
          f"statuses {dict(statuses)}")  # fmt: skip
    print(
        f"latency ms: p50 {quantiles[49]:.2f}  p95 {quantiles[94]:.2f}  "
        f"p99 {quantiles[98]:.2f}  max {max(latencies, default=0):.2f}"
    )
    if len(by_status) > 1:
        for status, found in sorted(by_status.items()):
            at = statistics.quantiles(found, n=100) if len(found) > 1 else found * 99
            print(f"  status {status}: {len(found)}, p50 {at[49]:.2f}  p95 {at[94]:.2f}  "
                  f"p99 {at[98]:.2f}  max {max(found):.2f} ms")  # fmt: skip
    if timeline:
        print_timeline(seconds_of)
    return latencies


def print_timeline(seconds_of: dict[int, list[tuple[int | str, float]]]) -> None:
    """One line per second of the schedule: its requests by status, and the p95 (ms) of those
    answered (a request that failed has no latency)."""
    for second, answers in sorted(seconds_of.items()):
        counts = Counter(status for status, _ in answers)
        timed = sorted(latency for status, latency in answers if isinstance(status, int))
        p95 = timed[min(len(timed) - 1, int(len(timed) * 0.95))] if timed else 0.0
        print(f"  second {second:3d}: {dict(sorted(counts.items(), key=str))}  p95 {p95:.1f} ms")


async def _bench_key(url: str) -> str:
    secret = check_secret(get_settings().api_key_secret)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute(
            "INSERT INTO planos (nome, limite_por_minuto) VALUES (%s, 100000000) "
            "ON CONFLICT (nome) DO NOTHING",
            (BENCH_PLAN,),
        )
        conta, _ = await service.ensure_account(
            conn, nome="Bench", email="bench@localhost", telefone="", plano=BENCH_PLAN,
            papel="usuario",
        )  # fmt: skip
        # Earlier runs' keys are revoked: an account holds at most 20 active keys.
        await conn.execute(
            "UPDATE chaves SET revogada_em = now() WHERE conta_id = %s AND revogada_em IS NULL",
            (conta.id,),
        )
        return (await service.issue_key(conn, secret, conta.id, "bench", [])).api_key


def bench_key() -> str:
    """A new key of the bench account (its earlier keys revoked), whose plan row lets a
    benchmark run unthrottled (the database of `DATABASE_URL`, migrated first;
    `API_KEY_SECRET` must be the server's)."""
    database = get_settings().database_url
    migrate(database)
    return asyncio.run(_bench_key(database))


async def _bench_session() -> str:
    settings = get_settings()
    async with await psycopg.AsyncConnection.connect(settings.database_url) as conn:
        conta = await repository.find_account(conn, "bench@localhost")
    assert conta is not None, "bench_key() makes the bench account first"
    redis = Redis.from_url(settings.redis_url)
    try:
        return await Sessions(redis, settings.redis_prefix).open(conta.id)
    finally:
        await redis.aclose()


def bench_session() -> dict[str, str]:
    """A dashboard session of the bench account (the cookie a signed-in browser sends), in the
    Redis of `REDIS_URL` under `REDIS_PREFIX` (the server's)."""
    bench_key()
    return {SESSION_COOKIE: asyncio.run(_bench_session())}
