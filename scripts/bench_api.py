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
import sys
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.cnpj import check_digits  # noqa: E402
from indexer import elastic  # noqa: E402
from scripts.loadgen import MakeRequest, bench_key, open_loop  # noqa: E402


def sample_cnpjs(es_url: str, alias: str, count: int, seed: int) -> list[str]:
    es = elastic.connect(es_url)
    hits = es.search(
        index=alias,
        size=count,
        source_includes=["cnpj"],
        query={"function_score": {"random_score": {"seed": seed, "field": "_seq_no"}}},
    )["hits"]["hits"]
    es.close()
    known = [hit["_source"]["cnpj"] for hit in hits]
    rng = random.Random(seed)
    unknown = []
    for _ in range(max(len(known) // 10, 1)):
        body = f"{rng.randint(0, 99_999_999):08d}{rng.randint(1, 9999):04d}"
        unknown.append(body + check_digits(body))
    return known + unknown


def request_maker(url: str, cnpjs: list[str], batch: int) -> MakeRequest:
    def make(session: aiohttp.ClientSession, rng: random.Random) -> Any:
        if batch:
            return session.post(f"{url}/v1/cnpj/lote", json=rng.sample(cnpjs, batch))
        return session.get(f"{url}/v1/cnpj/{rng.choice(cnpjs)}")

    return make


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
        help="Bearer key (default: $API_KEY, else a new key of the bench plan)",
    )
    args = parser.parse_args()
    cnpjs = sample_cnpjs(args.elasticsearch, args.alias, args.sample, seed=7)
    label = f"POST /v1/cnpj/lote x{args.batch}" if args.batch else "GET /v1/cnpj/{cnpj}"
    make = request_maker(args.url, cnpjs, args.batch)
    asyncio.run(open_loop(make, args.rate, args.seconds, label, args.api_key or bench_key()))


if __name__ == "__main__":
    main()
