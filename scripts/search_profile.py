"""Where a name search's time goes in Elasticsearch: a pass of `/search` (the first, the words as
typed, or the tolerant one) sent alone, then again without each group of its clauses, with the
analyst page's facets, and with hits counted only up to 10,000, one query at a time.

    .venv/bin/python scripts/search_profile.py --alias bench [--queries 150] [--etapa tolerante] \
        [--clauses]

The queries are those of `scripts/bench_search.py --endpoint search` (names of the alias's own
documents typed the sloppy ways of the evaluation). Each variant runs once to warm the caches,
then once measured; prints Elasticsearch's `took` (mean, p50, p95, in ms) per variant and the
hits the queries match (a name shared by thousands of establishments is scored thousands of
times). Variants without a group are not searches the API makes: they show what each costs.
`--clauses` instead runs the pass as the API sends it with Elasticsearch's profiler and prints the
time its leaf queries took per kind and field (Lucene's own, inflated by the profiler's timing),
with the part of it spent advancing through postings.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.summary import SOURCE_FIELDS  # noqa: E402
from app.search import filters as f  # noqa: E402
from app.search.service import SORT, Etapa, Modo, build_query, facet_aggregations  # noqa: E402
from scripts.bench_search import requests_for, sample_documents  # noqa: E402


def _matches(query: dict[str, Any]) -> list[Any]:
    """The clauses of which one must match (the name's fields), inside `query`."""
    name = query["bool"]["must"][0]
    clauses: list[Any] = name["bool"]["must"][0]["bool"]["should"]
    return clauses


def _without(word: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(query: dict[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(query)
        name = changed["bool"]["must"][0]["bool"]["must"][0]["bool"]
        name["should"] = [c for c in _matches(changed) if word not in str(c)]
        return changed

    return change


def _no_ranking(query: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(query)
    changed["bool"]["must"][0]["bool"]["should"] = []
    changed["bool"]["should"] = []
    return changed


FACETS = facet_aggregations(list(f.FACETS))
"""The four facets the analyst's page asks for with its first page."""

VARIANTS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any]]] = {
    "the pass as the API sends it": (lambda query: query, {}),
    "without the ranking clauses": (_no_ranking, {}),
    "without the prefix of the last word": (_without("match_bool_prefix"), {}),
    "without the joined-words fields": (_without("juntas"), {}),
    "without the sound keys": (_without("busca.fonetica"), {}),
    "without the partner names": (_without("busca.socios"), {}),
    "with the analyst page's four facets": (lambda query: query, {"aggregations": FACETS}),
    "hits counted up to 10,000, not all": (lambda query: query, {"track_total_hits": 10_000}),
}
"""Name -> the change to the query and the search's options that differ from the API's."""


def answer_total(es: Elasticsearch, alias: str, query: dict[str, Any]) -> int:
    """The establishments `query` matches."""
    total: int = es.count(index=alias, query=query)["count"]
    return total


def _leaves(node: dict[str, Any], into: dict[str, list[int]]) -> None:
    """Adds the profiled query `node`'s leaf queries to `into`: per kind and field, [total
    nanoseconds, nanoseconds advancing]."""
    children = node.get("children", [])
    if children and node["type"] in ("BooleanQuery", "BoostQuery"):
        for child in children:
            _leaves(child, into)
        return
    fields = sorted({part.split(":")[0].lstrip("+(") for part in node["description"].split()
                     if ":" in part})  # fmt: skip
    spent = into.setdefault(f"{node['type']} {','.join(fields[:2])}", [0, 0])
    spent[0] += node["time_in_nanos"]
    spent[1] += node["breakdown"].get("advance", 0) + node["breakdown"].get("next_doc", 0)


def profile_clauses(es: Elasticsearch, alias: str, queries: list[dict[str, Any]]) -> None:
    """Prints where the queries' time went, by leaf query (see the module)."""
    spent: dict[str, list[int]] = {}
    for measured in (False, True):
        for query in queries:
            answer = es.search(
                index=alias, query=query, sort=SORT, size=21, source_includes=SOURCE_FIELDS,
                track_total_hits=True, request_cache=False, profile=measured,
            )  # fmt: skip
            for shard in answer.get("profile", {}).get("shards", []) if measured else []:
                for search in shard["searches"]:
                    for node in search["query"]:
                        _leaves(node, spent)
    print(f"{len(queries)} queries on {alias}, profiled; ms per query (advancing)")
    for name, (total, advancing) in sorted(spent.items(), key=lambda item: -item[1][0])[:15]:
        each, advancing_each = total / 1e6 / len(queries), advancing / 1e6 / len(queries)
        print(f"{name[:70]:70} {each:6.2f} ({advancing_each:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--es", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument("--alias", required=True)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--etapa", choices=[Etapa.EXATA.value, Etapa.TOLERANTE.value], default=Etapa.EXATA.value,
        help="the pass: the words as typed (run first) or with a typo per word (run next)",
    )  # fmt: skip
    parser.add_argument(
        "--clauses", action="store_true", help="profile the pass's leaf queries instead"
    )
    args = parser.parse_args()
    etapa = Etapa(args.etapa)
    es = Elasticsearch(args.es.split(",")[0], request_timeout=60)
    documents = sample_documents(args.es.split(",")[0], args.alias, args.queries, args.seed)
    queries = [
        build_query(msgspec.convert(request, f.Filtros, strict=False), Modo.SEARCH, etapa)[0]
        for request in requests_for("search", documents, random.Random(args.seed))
    ]
    if args.clauses:
        profile_clauses(es, args.alias, queries)
        return
    took: dict[str, list[int]] = {name: [] for name in VARIANTS}
    totals: list[int] = []
    for measured in (False, True):
        for query in queries:
            for name, (change, options) in VARIANTS.items():
                answer = es.search(
                    index=args.alias, query=change(query), sort=SORT, size=21,
                    source_includes=SOURCE_FIELDS,
                    **{"track_total_hits": True, "request_cache": False, **options},
                )  # fmt: skip
                if measured:
                    took[name].append(answer["took"])
            if measured:
                totals.append(answer_total(es, args.alias, query))
    print(f"{len(queries)} queries on {args.alias}, pass {etapa.value}; Elasticsearch's took in ms")
    for name, values in took.items():
        values.sort()
        print(f"{name:40} mean {statistics.mean(values):6.1f}  p50 {values[len(values) // 2]:4d}"
              f"  p95 {values[int(len(values) * 0.95)]:4d}")  # fmt: skip
    totals.sort()
    empty = sum(1 for total in totals if total == 0)
    print(f"hits per query: p50 {totals[len(totals) // 2]:,}, p95 "
          f"{totals[int(len(totals) * 0.95)]:,}, max {totals[-1]:,}; "
          f"none: {empty} (the API runs the next pass for those)")  # fmt: skip


if __name__ == "__main__":
    main()
