"""Latency of `GET /v1/cnpj/{cnpj}` (or of `POST /v1/cnpj/lote` with `--batch N`) at a fixed
request rate, from a separate process.

    .venv/bin/python scripts/bench_api.py --url http://127.0.0.1:8000 --alias empresas \
        [--rate 300] [--seconds 30]

Open-loop load: requests start on a fixed schedule whatever the answers' latency, so a slow
server shows up as latency instead of hiding behind a lower rate. CNPJs are drawn from the
documents of the alias (and one in ten is a valid CNPJ that is not there, for 404s). Prints the
achieved rate, status counts and p50/p95/p99/max latency in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.cnpj import check_digits  # noqa: E402
from indexer import elastic  # noqa: E402


def sample_cnpjs(es_url: str, alias: str, count: int, seed: int) -> list[str]:
    es = elastic.connect(es_url)
    hits = es.search(
        index=alias,
        size=count,
        source=False,
        query={"function_score": {"random_score": {"seed": seed, "field": "_seq_no"}}},
    )["hits"]["hits"]
    es.close()
    known = [hit["_id"] for hit in hits]
    rng = random.Random(seed)
    unknown = []
    for _ in range(max(len(known) // 10, 1)):
        body = f"{rng.randint(0, 99_999_999):08d}{rng.randint(1, 9999):04d}"
        unknown.append(body + check_digits(body))
    return known + unknown


async def open_loop(
    total: int, rate: float, request: Callable[[int], Coroutine[Any, Any, None]]
) -> float:
    """Starts `request(n)` for n in range(total) on a fixed schedule of `rate` per second,
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


async def run(
    url: str, cnpjs: list[str], rate: float, seconds: float, batch: int, api_key: str | None
) -> None:
    latencies: list[float] = []
    statuses: Counter[int | str] = Counter()
    rng = random.Random(1)
    connector = aiohttp.TCPConnector(limit=512)
    timeout = aiohttp.ClientTimeout(total=10)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, headers=headers
    ) as session:

        async def one(cnpj: str) -> None:
            started = time.perf_counter()
            try:
                if batch:
                    request = session.post(f"{url}/v1/cnpj/lote", json=rng.sample(cnpjs, batch))
                else:
                    request = session.get(f"{url}/v1/cnpj/{cnpj}")
                async with request as response:
                    await response.read()
                    statuses[response.status] += 1
            except (aiohttp.ClientError, TimeoutError) as error:
                statuses[type(error).__name__] += 1
                return
            latencies.append((time.perf_counter() - started) * 1000)

        total = int(rate * seconds)
        elapsed = await open_loop(total, rate, lambda _: one(rng.choice(cnpjs)))
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    achieved = total / elapsed
    print(f"requests {total} in {elapsed:.1f} s ({achieved:.0f} req/s), statuses {dict(statuses)}")
    print(
        f"latency ms: p50 {quantiles[49]:.2f}  p95 {quantiles[94]:.2f}  "
        f"p99 {quantiles[98]:.2f}  max {max(latencies, default=0):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default=os.environ.get("INDEX_ALIAS", "empresas"))
    parser.add_argument(
        "--elasticsearch", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument("--rate", type=float, default=300)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--sample", type=int, default=5000)
    parser.add_argument(
        "--batch", type=int, default=0, help="POST /v1/cnpj/lote with this many CNPJs instead"
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("API_KEY"),
        help="Bearer key (default: $API_KEY) of a plan whose limit covers the run",
    )
    args = parser.parse_args()
    cnpjs = sample_cnpjs(args.elasticsearch, args.alias, args.sample, seed=7)
    asyncio.run(run(args.url, cnpjs, args.rate, args.seconds, args.batch, args.api_key))


if __name__ == "__main__":
    main()
