"""Open-loop latency of `GET /v1/cnpj/{cnpj}` (or of a search endpoint) at a fixed rate with
vegeta (a Go load generator: it costs the machine far less per request than a Python client, so
the latency it reports is the server's rather than the client's), with per-status counts and
percentiles.

    .venv/bin/python scripts/bench_vegeta.py --url http://127.0.0.1:8000 [--alias empresas] \
        [--endpoint lookup|search|nome|seek|busca] [--rate 2000] [--seconds 20] [--vegeta vegeta] \
        [--connections N] [--timeline]

The search endpoints send the query mix of `scripts/bench_search.py` (names typed the sloppy
ways of the evaluation, combinations of filters; `busca` is the analyst page's own request,
results with their facet counts, with a dashboard session), 2,000 queries in a shuffled order.

vegeta is not a Debian package; with Go (1.22+) it installs from the Go module proxy:
`GOBIN=$HOME/bin go install github.com/tsenart/vegeta/v12@v12.12.0`. Needs the services of
`scripts/services.sh env` and `API_KEY_SECRET` set to the server's (a key of the unthrottled
bench plan is made). CNPJs are 5,000 random documents of the alias, in a shuffled order.
"""

from __future__ import annotations

import argparse
import csv
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.settings import get_settings  # noqa: E402
from scripts.bench_api import sample_cnpjs  # noqa: E402
from scripts.bench_search import PAGES, PATHS, requests_for, sample_documents  # noqa: E402
from scripts.loadgen import bench_key, bench_session, print_timeline  # noqa: E402


def _targets(addresses: list[str], headers: list[str]) -> Path:
    """vegeta's targets file: one GET per address, each with `headers`."""
    handle = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)  # noqa: SIM115
    for address in addresses:
        handle.write("\n".join([f"GET {address}", *headers]) + "\n\n")
    handle.close()
    return Path(handle.name)


def _lookups(url: str, alias: str) -> list[str]:
    numbers = sample_cnpjs(get_settings().elasticsearch_url, alias, 5000, seed=7)
    numbers = numbers[: len(numbers) * 10 // 11]  # the records only, no 404s
    return [f"{url}/v1/cnpj/{number}" for number in numbers]


def _searches(url: str, alias: str, endpoint: str) -> list[str]:
    documents = sample_documents(get_settings().elasticsearch_url, alias, 2000, seed=7)
    made = requests_for(endpoint, documents, random.Random(7))
    return [f"{url}{PATHS[endpoint]}?{urlencode(params)}" for params in made]


def _seconds(rows: list[list[str]]) -> dict[int, list[tuple[int | str, float]]]:
    """The requests by the second of the run they started in: (status, latency in ms), as
    `scripts.loadgen.print_timeline` takes them (vegeta's status 0 is a request that failed)."""
    start = min(int(row[0]) for row in rows)
    seconds_of: dict[int, list[tuple[int | str, float]]] = {}
    for row in rows:
        status: int | str = int(row[1]) or "failed"
        seconds_of.setdefault((int(row[0]) - start) // 10**9, []).append(
            (status, int(row[2]) / 1e6)
        )
    return seconds_of


def _summary(rows: list[list[str]]) -> list[str]:
    """One line per status: count, share, p50/p95/p99/max in milliseconds."""
    latencies: dict[str, list[float]] = {}
    for row in rows:
        latencies.setdefault(row[1], []).append(int(row[2]) / 1e6)
    lines = []
    for status, found in sorted(latencies.items()):
        found.sort()
        n = len(found)
        at = [found[min(int(n * q), n - 1)] for q in (0.5, 0.95, 0.99)]
        lines.append(
            f"status {status}: {n} ({100 * n / len(rows):.1f} %), p50 {at[0]:.2f} "
            f"p95 {at[1]:.2f} p99 {at[2]:.2f} max {found[-1]:.2f} ms"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default="empresas")
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--vegeta", default="vegeta")
    parser.add_argument("--connections", type=int, default=0, help="vegeta's -max-connections")
    parser.add_argument(
        "--timeline", action="store_true", help="also print each second's statuses and p95"
    )
    parser.add_argument(
        "--endpoint", choices=["lookup", "search", "nome", "seek", "busca"], default="lookup"
    )
    args = parser.parse_args()
    if args.endpoint == "lookup":
        addresses, path = _lookups(args.url, args.alias), "/v1/cnpj/{cnpj}"
    else:
        addresses, path = _searches(args.url, args.alias, args.endpoint), PATHS[args.endpoint]
    random.Random(1).shuffle(addresses)
    if args.endpoint in PAGES:
        ((name, value),) = bench_session().items()
        headers = [f"Cookie: {name}={value}", "HX-Request: true"]
    else:
        headers = [f"Authorization: Bearer {bench_key()}"]
    targets = _targets(addresses, headers)
    try:
        attack = subprocess.run(
            [args.vegeta, "attack", f"-rate={args.rate}", f"-duration={args.seconds}s",
             f"-targets={targets}", "-timeout=5s",
             *([f"-max-connections={args.connections}"] if args.connections else [])],
            capture_output=True, check=True,
        )  # fmt: skip
        encoded = subprocess.run(
            [args.vegeta, "encode", "--to", "csv"],
            input=attack.stdout, capture_output=True, check=True,
        )  # fmt: skip
    finally:
        targets.unlink()
    print(f"GET {path} at {args.rate} req/s for {args.seconds} s (vegeta, open loop)")
    rows = list(csv.reader(encoded.stdout.decode().splitlines()))
    for line in _summary(rows):
        print(line)
    if args.timeline:
        print_timeline(_seconds(rows))


if __name__ == "__main__":
    main()
