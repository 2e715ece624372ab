"""What sorting a search of filters alone on `busca.ordem` saves Elasticsearch: each `/seek`
shape of `scripts/bench_search.py --endpoint seek` sent directly, as the API sends it (filters
alone sorted on the written rank, a name scored), against the same search scored by the ranking
boosts (how a search of filters alone ranked before the rank was written: the same order).

    .venv/bin/python scripts/seek_sort_cost.py --alias bench-1000000 [--rounds 3] [--per-shape 300]

The two run in turns, shape by shape, one search at a time after a warm-up of each; prints per
shape and variant Elasticsearch's CPU per search (from /proc, its process on this machine) and
its mean `took`, then the mean over the shapes of each variant.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.summary import SOURCE_FIELDS  # noqa: E402
from app.search import filters as f  # noqa: E402
from app.search.names import ranking_boosts  # noqa: E402
from app.search.service import (  # noqa: E402
    SORT,
    Etapa,
    Modo,
    build_query,
    facet_aggregations,
    listing_for,
)
from scripts.bench_search import requests_for, sample_documents  # noqa: E402


def elasticsearch_cpu(pid: int) -> float:
    """Seconds of CPU the process has used (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def elasticsearch_pid() -> int:
    """The process id of the Elasticsearch node on this machine."""
    found = subprocess.run(
        ["pgrep", "-f", "org.elasticsearch.bootstrap.Elasticsearch"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(found.stdout.split()[0])


Shapes = dict[tuple[str, ...], list[dict[str, str]]]
"""Requests by the fields they send."""


def shapes_of(endpoint: str, es_url: str, alias: str) -> Shapes:
    """The requests of `scripts/bench_search.py --endpoint endpoint`, by the fields they send."""
    documents = sample_documents(es_url, alias, 2000, seed=7)
    shapes: Shapes = {}
    for request in requests_for(endpoint, documents, random.Random(7)):
        shapes.setdefault(tuple(sorted(request)), []).append(request)
    return shapes


def bodies(requests: list[dict[str, str]], scored: bool) -> list[dict[str, Any]]:
    """The search bodies of `requests` as the API sends them, or scored by the boosts."""
    made = []
    for request in requests:
        filters = f.from_query(request)
        query, _ = build_query(filters, Modo.SEEK, Etapa.EXATA)
        sort = listing_for(query).sort
        if scored and "must" not in query["bool"]:
            everything: list[dict[str, Any]] = [{"match_all": {}}]
            clauses = query["bool"]["filter"]
            query = {"bool": {"must": everything, "filter": clauses, "should": ranking_boosts()}}
            sort = SORT
        aggregations = facet_aggregations(f.facet_names(filters)) or None
        made.append({"query": query, "sort": sort, "aggregations": aggregations})
    return made


def cost_arguments(doc: str) -> argparse.ArgumentParser:
    """The options of a script that compares search variants' cost, shape by shape."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--alias", required=True)
    parser.add_argument(
        "--elasticsearch", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-shape", type=int, default=300)
    return parser


def main() -> None:
    args = cost_arguments(__doc__ or "").parse_args()
    pid = elasticsearch_pid()
    es = Elasticsearch(args.elasticsearch, request_timeout=60)
    shapes = shapes_of("seek", args.elasticsearch, args.alias)
    means: dict[str, list[float]] = {"as sent": [], "scored": []}
    for shape, requests in shapes.items():
        for _ in range(args.rounds):
            for variant in means:
                sent = bodies(requests[: args.per_shape], scored=variant == "scored")
                for body in sent[:30]:
                    es.search(index=args.alias, size=21, **body)
                before, took = elasticsearch_cpu(pid), []
                for body in sent:
                    answer = es.search(
                        index=args.alias, size=21, source_includes=SOURCE_FIELDS,
                        track_total_hits=True, **body,
                    )  # fmt: skip
                    took.append(answer["took"])
                cpu = 1000 * (elasticsearch_cpu(pid) - before) / len(sent)
                means[variant].append(cpu)
                print(f"{','.join(shape):40} {variant:8} CPU {cpu:5.2f} ms a search, "
                      f"took {statistics.mean(took):5.2f} ms")  # fmt: skip
    for variant, values in means.items():
        print(f"{variant}: {statistics.mean(values):.2f} ms of CPU a search, over the shapes")


if __name__ == "__main__":
    main()
