"""A monthly reindex while the service is read: a full `indexer load` and alias swap under
steady lookups, searches, tool calls and validations; listings paged across the swap; the
monitors' events of the new release, each once; then a load killed half-way and the next one.

    bash scripts/services.sh up; eval "$(bash scripts/services.sh env)"; . scripts/secret.sh
    .venv/bin/python scripts/reindex.py [--rate 40] [--monitors 2000] [--listings 20] [--json F]

In a database and an alias of its own (removed at the end): the sample is the live release, with
`--monitors` monitors over it delivering to a receiver on loopback, the app (two workers) and a
worker. With the requests running, it opens `--listings` listings (`GET /v1/seek`, 5 a page),
loads a second release in which every trade name changed (the swap), pages every listing to its
end, waits for the monitors' events, then starts a third load, kills its whole process group
(SIGKILL) once its index exists, checks the live release did not change, and loads again: that
load deletes what the killed one left and goes live (every monitor gets its second event).

Prints per phase the requests sent and their outcomes, the listings' pages and items, the
releases the monitors recorded, the deliveries (unique, repeated), and what was cleaned up.
Figures in docs/resilience.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import aiohttp
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer import elastic  # noqa: E402
from scripts.faults import (  # noqa: E402
    PhaseFigures,
    Stack,
    Traffic,
    failed,
    figures,
    received_at_least,
    until,
)

DATABASE = "registry_reindex"
ALIAS = "reindex"


@dataclass(frozen=True)
class Options:
    rate: float = 40
    """Requests per second."""
    monitors: int = 2000
    listings: int = 20
    settle: float = 5
    """Seconds between steps."""


@dataclass
class Listing:
    """One listing opened before the swap and paged after it."""

    pages: int = 0
    items: int = 0
    unique: int = 0
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass
class Report:
    rate: float
    phases: dict[str, PhaseFigures]
    not_200: int
    """Requests answered anything but 200 (a 503 with `Retry-After` included)."""
    failed: int
    """Requests with a 5xx other than such a 503, or no answer."""
    listings: list[Listing]
    swap_seconds: float
    """The second load's wall time (the swap is its last step)."""
    releases_recorded: dict[str, int]
    """Per live release after each load: the times the monitors recorded it."""
    monitors: int
    deliveries_unique: int
    deliveries_received: int
    live_unchanged_after_kill: bool
    left_by_killed_load: list[str]
    cleaned_up_by_next_load: list[str]

    @property
    def whole(self) -> bool:
        """Every claim holds: no failed request, every listing paged to its end without a
        repeat, each release recorded once, each event delivered once, the live release kept
        through the killed load and its leftovers deleted by the next."""
        return (
            self.failed == 0
            and all(set(x.statuses) <= {"200"} and x.items == x.unique for x in self.listings)
            and all(count == 1 for count in self.releases_recorded.values())
            and self.deliveries_unique == self.deliveries_received == 2 * self.monitors
            and self.live_unchanged_after_kill
            and bool(self.left_by_killed_load)
            and self.cleaned_up_by_next_load == self.left_by_killed_load
        )


async def open_listings(
    url: str, key: str, count: int
) -> list[tuple[dict[str, str], str, list[str]]]:
    """`count` listings' first pages: their query, their cursors and the CNPJs seen."""
    opened = []
    states = ["SP", "RJ", "MG", "PR", "RS", "SC", "BA", "GO", "PE", "CE"]
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        for n in range(count):
            params = {"uf": states[n % len(states)], "limit": "5"}
            async with session.get(f"{url}/v1/seek", params=params) as response:
                page = await response.json()
            if page.get("next_cursor"):
                seen = [item["cnpj"] for item in page["data"]]
                opened.append((params, page["next_cursor"], seen))
    return opened


async def page_to_end(
    url: str, key: str, params: dict[str, str], cursor: str, seen: list[str]
) -> Listing:
    listing = Listing(pages=1, items=len(seen))
    found = list(seen)
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        next_cursor: str | None = cursor
        while next_cursor:
            query = {**params, "cursor": next_cursor}
            async with session.get(f"{url}/v1/seek", params=query) as response:
                status = str(response.status)
                listing.statuses[status] = listing.statuses.get(status, 0) + 1
                if response.status != 200:
                    break
                page = await response.json()
            listing.pages += 1
            found += [item["cnpj"] for item in page["data"]]
            next_cursor = page["next_cursor"]
    listing.items, listing.unique = len(found), len(set(found))
    return listing


def recorded(database: str, alias: str) -> dict[str, int]:
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT indice, count(*) FROM releases WHERE alias = %s GROUP BY indice", (alias,)
        ).fetchall()
    return {str(index): int(count) for index, count in rows}


async def kill_a_load(stack: Stack) -> tuple[list[str], bool]:
    """A third load, its process group killed once its index exists; what it left and whether
    the live release stayed."""
    [live] = elastic.alias_targets(stack.es, stack.alias)
    process = await asyncio.to_thread(
        subprocess.Popen, stack.load_command(stack.first), env=stack.env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while not elastic.unfinished(stack.es, stack.alias):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the load ended before it could be killed")
        await asyncio.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    await asyncio.to_thread(process.wait)
    left = elastic.unfinished(stack.es, stack.alias)
    return left, elastic.alias_targets(stack.es, stack.alias) == [live]


async def scenario(stack: Stack, traffic: Traffic, args: Options) -> Report:
    running = asyncio.create_task(traffic.run())
    await asyncio.sleep(args.settle)
    listings = await open_listings(stack.url, stack.key, args.listings)

    traffic.phase = "load and swap"
    started = time.monotonic()
    await asyncio.to_thread(stack.load, stack.second)
    swap_seconds = round(time.monotonic() - started, 1)
    traffic.phase = "after the swap"
    paged = [
        await page_to_end(stack.url, stack.key, params, cursor, seen)
        for params, cursor, seen in listings
    ]
    await until(lambda: received_at_least(stack.port, args.monitors), 600)
    await asyncio.sleep(args.settle)

    traffic.phase = "load killed"
    left, unchanged = await kill_a_load(stack)
    await asyncio.sleep(args.settle)
    traffic.phase = "next load"
    written = stack.workdir / "next-load.json"
    await asyncio.to_thread(
        subprocess.run, [*stack.load_command(stack.first), "--report", str(written)],
        env=stack.env, check=True, capture_output=True,
    )  # fmt: skip
    cleaned = json.loads(written.read_text())["cleaned_up"]
    await until(lambda: received_at_least(stack.port, 2 * args.monitors), 600)
    traffic.phase = "after"
    await asyncio.sleep(args.settle)
    traffic.stop()
    await running
    stats = stack.deliveries()
    outcomes = traffic.outcomes
    return Report(
        rate=args.rate,
        phases=figures(outcomes),
        not_200=sum(o.outcome != "200" for o in outcomes),
        failed=sum(failed(o) for o in outcomes),
        listings=paged,
        swap_seconds=swap_seconds,
        releases_recorded=recorded(stack.database, stack.alias),
        monitors=args.monitors,
        deliveries_unique=int(stats.get("unique", 0)),
        deliveries_received=int(stats.get("received", 0)),
        live_unchanged_after_kill=unchanged,
        left_by_killed_load=left,
        cleaned_up_by_next_load=list(cleaned),
    )


def print_report(report: Report) -> None:
    print(f"{report.rate:g} requests/s: lookups, searches, tool calls, validations in turn")
    print(f"  {'phase':<16} {'sent':>6} {'failed':>6} {'p50':>7} {'p99':>8} ms")
    for name, phase in report.phases.items():
        print(f"  {name:<16} {phase.sent:>6} {phase.failed:>6} {phase.p50_ms:>7} "
              f"{phase.p99_ms:>8}   {phase.outcomes}")  # fmt: skip
    print(f"not 200: {report.not_200}; failed: {report.failed}")
    print(f"load with swap: {report.swap_seconds} s under the requests")
    pages = sum(listing.pages for listing in report.listings)
    complete = sum(set(listing.statuses) <= {"200"} for listing in report.listings)
    print(f"listings opened before the swap: {len(report.listings)}, paged to their end after "
          f"it: {complete}, {pages} pages, items {sum(x.items for x in report.listings)} "
          f"(repeated {sum(x.items - x.unique for x in report.listings)})")  # fmt: skip
    print(f"releases recorded for the monitors: {report.releases_recorded}")
    print(f"deliveries: {report.deliveries_unique} unique of {2 * report.monitors} events "
          f"(2 releases x {report.monitors} monitors), "
          f"{report.deliveries_received} received")  # fmt: skip
    print(f"killed load left {report.left_by_killed_load}; live release unchanged: "
          f"{report.live_unchanged_after_kill}; the next load deleted "
          f"{report.cleaned_up_by_next_load}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=Options.rate, help="Requests per second.")
    parser.add_argument("--monitors", type=int, default=Options.monitors)
    parser.add_argument("--listings", type=int, default=Options.listings)
    parser.add_argument("--settle", type=float, default=Options.settle, help="Seconds per step.")
    parser.add_argument("--json", type=Path, help="Write the figures as JSON here.")
    args = parser.parse_args()
    report = run(Options(args.rate, args.monitors, args.listings, args.settle))
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=2) + "\n")
    sys.exit(0 if report.whole else 1)


def run(args: Options) -> Report:
    stack = Stack(args.monitors, DATABASE, ALIAS)
    try:
        traffic = Traffic(stack.url, stack.key, stack.cnpjs, stack.words, args.rate)
        try:
            return asyncio.run(scenario(stack, traffic, args))
        finally:
            stack.stop()
    finally:
        stack.remove()


if __name__ == "__main__":
    main()
