"""Warming Elasticsearch up with the API's own searches before it takes traffic.

A node that has just started answers its first minutes of searches several times slower than
later: the JVM compiles the query paths as they run, and caches (a facet's global ordinals,
the filters' bit sets) are built on first use. On the 2-core machine the analyst page at 200
a second shed requests for the first minutes after a restart (`docs/dashboard.md`). `warm`
spends that time before the traffic comes: it samples companies of the alias and sends, from a
few threads, the queries that `/search`, `/nome`, `/seek` and the analyst page send (built by
`app.search.service.build_query`, the API's own builder), until the time is up, and reports
each interval's rate and `took` so the operator sees Elasticsearch settle.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from app.domain.summary import SOURCE_FIELDS
from app.errors import BadRequestError
from app.lib.listing import BARE
from app.search import filters as f
from app.search.names import words
from app.search.service import (
    TIMEOUT,
    Etapa,
    Modo,
    build_query,
    facet_aggregations,
    listing_for,
)

SAMPLE_FIELDS = [
    "razao_social", "nome_fantasia", "endereco.uf", "endereco.cep", "endereco.municipio.codigo",
    "cnae_principal.codigo",
]  # fmt: skip
PAGE = 21
"""Hits a search asks for: a page of 20 and one more, as the API does."""
FETCHES: list[dict[str, Any]] = [BARE, {"source_includes": SOURCE_FIELDS}]
"""What a search asks back, in turn: nothing but the hits' sort values (an API process with the
release's record store reads the companies there, `app.lib.listing`), or the summary's fields
(one without it). Each is its own path through Elasticsearch's fetch phase."""
REQUEST_TIMEOUT = 10.0
"""Seconds a search may take before the warm-up gives up (Elasticsearch stops at `TIMEOUT`)."""


class WarmError(Exception):
    """Nothing to warm with, or Elasticsearch refused a search."""


@dataclass(slots=True)
class Interval:
    """The searches answered in one reporting interval."""

    start: float
    took: list[int] = field(default_factory=list)
    """Elasticsearch's `took` of each search, in ms."""

    def line(self, seconds: float) -> str:
        """The interval's report: searches, their rate over `seconds`, and their `took`."""
        if not self.took:
            return f"{self.start:5.0f} s: no search answered"
        took = sorted(self.took)
        p95 = took[min(len(took) - 1, int(len(took) * 0.95))]
        return (
            f"{self.start:5.0f} s: {len(took):,} searches, {len(took) / seconds:,.0f}/s,"
            f" took p50 {statistics.median(took):.0f} ms, p95 {p95} ms"
        )


def _typo(name: str, rng: random.Random) -> str:
    """`name` with two adjacent letters of its longest word swapped (one typo)."""
    parts = name.split()
    if not parts:
        return name
    longest = max(range(len(parts)), key=lambda i: len(parts[i]))
    word = parts[longest]
    if len(word) >= 4:
        at = rng.randrange(1, len(word) - 2)
        parts[longest] = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return " ".join(parts)


def _being_typed(name: str) -> str:
    """`name` as a user still typing it: its last word cut to three letters (whole when the
    name has one word or its last is that short)."""
    parts = name.split()
    if len(parts) < 2 or len(parts[-1]) <= 3:
        return name
    return " ".join([*parts[:-1], parts[-1][:3]])


def _reordered(name: str) -> str:
    """`name`'s words in the reverse order."""
    return " ".join(reversed(name.split()))


SEEK_FACETS = ["uf", "situacao"]
"""The facets the warm-up asks of a `/seek` by opening dates."""


def seek_filters(document: dict[str, Any], rng: random.Random) -> f.Filtros:
    """One of `/seek`'s other kinds of filters about `document`, drawn by `rng`: the first word
    of its name within its UF, its CEP's prefix, its municipality, a range of share capital, or
    a range of opening dates with facets. Each kind runs its own paths in Elasticsearch (text,
    prefix, term, numeric and date ranges, aggregations), which a node just started compiles on
    their first use."""
    address = document.get("endereco") or {}
    uf = str(address.get("uf") or "SP")
    cnae = str((document.get("cnae_principal") or {}).get("codigo") or "4781400")
    named = words(str(document.get("nome_fantasia") or document.get("razao_social") or ""))
    kinds = [
        lambda: f.Filtros(cep=str(address.get("cep") or "01001000")[:5], situacao="ativa"),
        lambda: f.Filtros(
            municipio=str((address.get("municipio") or {}).get("codigo") or "7107"),
            com_email=True,
        ),
        lambda: f.Filtros(capital_min=10_000, capital_max=500_000, porte="me,epp", uf=uf),
        lambda: f.Filtros(
            abertura_de=dt.date(2015, 1, 1),
            abertura_ate=dt.date(2020, 12, 31),
            cnae=cnae[:4],
            facets=",".join(SEEK_FACETS),
        ),
    ]
    if named:
        kinds.append(lambda: f.Filtros(nome=named[0], uf=uf))
    return rng.choice(kinds)()


def searches(document: dict[str, Any], rng: random.Random) -> Iterator[dict[str, Any]]:
    """The request bodies the API would send for searches about `document`: its name as typed,
    still being typed, in another order and with a typo (each with the analyst page's facets),
    by `/nome`, and `/seek`'s filters (its UF and activity, and one other kind,
    `seek_filters`)."""
    name = str(document.get("nome_fantasia") or document.get("razao_social") or "")
    uf = str((document.get("endereco") or {}).get("uf") or "SP")
    cnae = str((document.get("cnae_principal") or {}).get("codigo") or "4781400")
    facets = facet_aggregations(list(f.FACETS))
    other = seek_filters(document, rng)
    shapes: list[tuple[f.Filtros, Modo, Etapa, dict[str, Any]]] = [
        (f.Filtros(uf=uf, cnae=cnae[:2]), Modo.SEEK, Etapa.TOLERANTE, {}),
        (
            other,
            Modo.SEEK,
            Etapa.TOLERANTE,
            facet_aggregations(SEEK_FACETS) if other.facets else {},
        ),
    ]
    if words(name):
        shapes += [
            (f.Filtros(q=name), Modo.SEARCH, Etapa.EXATA, facets),
            (f.Filtros(q=_being_typed(name)), Modo.SEARCH, Etapa.EXATA, facets),
            (f.Filtros(q=_reordered(name)), Modo.SEARCH, Etapa.EXATA, facets),
            (f.Filtros(q=_typo(name, rng)), Modo.SEARCH, Etapa.TOLERANTE, facets),
            (f.Filtros(q=_typo(name, rng)), Modo.SEARCH, Etapa.AMPLIADA, facets),
            (f.Filtros(nome=name, uf=uf), Modo.NOME, Etapa.EXATA, {}),
        ]
    for filters, mode, etapa, aggregations in shapes:
        try:
            query, _ = build_query(filters, mode, etapa)
        except BadRequestError:  # a value the API's filters refuse (bad data: a UF `R`)
            continue
        sort = listing_for(query).sort
        yield {"query": query, "sort": sort, "aggregations": aggregations or None}


def ready(es: Elasticsearch, alias: str, wait: str = "60s") -> None:
    """Wait until `alias` can be searched (its shards assigned); `WarmError` when it is
    missing or still not searchable after `wait`."""
    if not es.indices.exists(index=alias):
        raise WarmError(f"no index or alias {alias}")
    health = es.options(ignore_status=408).cluster.health(
        index=alias, wait_for_status="yellow", timeout=wait
    )
    if health["timed_out"]:
        raise WarmError(f"{alias} is not searchable after {wait} (status {health['status']})")


def sample(
    es: Elasticsearch, alias: str, count: int, seed: int, fields: list[str] = SAMPLE_FIELDS
) -> list[dict[str, Any]]:
    """`count` documents of `alias` drawn at random (the same ones for the same `seed`), with
    `fields` of their source."""
    response = es.search(
        index=alias,
        size=count,
        query={"function_score": {"random_score": {"seed": seed, "field": "_seq_no"}}},
        source_includes=fields,
    )
    found = [hit["_source"] for hit in response["hits"]["hits"]]
    if not found:
        raise WarmError(f"{alias} has no documents to search for")
    return found


def warm(
    es: Elasticsearch,
    alias: str,
    *,
    seconds: float,
    threads: int,
    every: float = 10.0,
    sample_size: int = 500,
    report: Callable[[str], None] = print,
) -> int:
    """Search `alias` from `threads` threads for `seconds`; `report` gets a line per `every`
    seconds. Returns the searches answered; `WarmError` when one fails."""
    ready(es, alias)
    rng = random.Random(7)  # noqa: S311 (typos and an order, not secrets)
    bodies = [body for doc in sample(es, alias, sample_size, seed=7) for body in searches(doc, rng)]
    if not bodies:
        raise WarmError(f"no search of the API can be built from the documents of {alias}")
    rng.shuffle(bodies)
    client = es.options(request_timeout=REQUEST_TIMEOUT, max_retries=0)
    began = time.monotonic()
    deadline = began + seconds
    stop = threading.Event()
    lock = threading.Lock()
    answered: list[tuple[float, int]] = []
    """(seconds since the start, took) of each search, in the order they were answered."""
    failures: list[Exception] = []

    def run(offset: int) -> None:
        for position in itertools.count(offset, threads):
            if stop.is_set() or time.monotonic() >= deadline:
                return
            try:
                answer = client.search(
                    index=alias,
                    size=PAGE,
                    track_total_hits=True,
                    timeout=TIMEOUT,
                    **FETCHES[position % len(FETCHES)],
                    **bodies[position % len(bodies)],
                )
            except Exception as error:  # the first one ends the warm-up
                failures.append(error)
                stop.set()
                return
            with lock:
                answered.append((time.monotonic() - began, int(answer["took"])))

    shown = 0

    def interval(start: float, end: float) -> Interval:
        """The searches answered from `start` to `end` seconds (not yet reported)."""
        nonlocal shown
        with lock:
            fresh = answered[shown:]
        took = list(itertools.takewhile(lambda pair: pair[0] < end, fresh))
        shown += len(took)
        return Interval(start, [ms for _, ms in took])

    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    start = 0.0
    try:
        while not stop.is_set() and any(worker.is_alive() for worker in workers):
            now = time.monotonic() - began
            if now < start + every:
                stop.wait(min(0.25, start + every - now))
                continue
            report(interval(start, start + every).line(every))
            start += every
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    if failures:
        raise WarmError(f"Elasticsearch refused a search: {failures[0]}") from failures[0]
    ended = time.monotonic() - began
    while start + every <= ended:
        report(interval(start, start + every).line(every))
        start += every
    rest = interval(start, float("inf"))
    if rest.took:
        report(rest.line(ended - start))
    return len(answered)
