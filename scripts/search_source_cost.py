"""What reading the companies of a list from the record store saves Elasticsearch: each search
shape of `scripts/bench_search.py` (`/seek`, `/search` or `/nome`) sent directly, as the API
sends it with a record store (no documents read: `_source` off, no stored fields), against the
same search reading the summary's fields from `_source` (as without a store).

    .venv/bin/python scripts/search_source_cost.py --alias bench-1000000 \
        [--endpoint seek|search|nome] [--rounds 3] [--per-shape 300]

The two run in turns, shape by shape, one search at a time after a warm-up of each; prints per
shape and variant Elasticsearch's CPU per search (from /proc, its process on this machine) and
its mean `took`, then the mean over the shapes of each variant.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.summary import SOURCE_FIELDS  # noqa: E402
from app.search import filters as f  # noqa: E402
from app.search.service import Etapa, Modo, build_query, facet_aggregations, listing_for  # noqa: E402
from scripts.seek_sort_cost import (  # noqa: E402
    cost_arguments,
    elasticsearch_cpu,
    elasticsearch_pid,
    shapes_of,
)

VARIANTS: dict[str, dict[str, Any]] = {
    "store": {"source": False, "stored_fields": "_none_"},
    "_source": {"source_includes": SOURCE_FIELDS},
}
MODES = {"seek": Modo.SEEK, "search": Modo.SEARCH, "nome": Modo.NOME}


def bodies(requests: list[dict[str, str]], mode: Modo) -> list[dict[str, Any]]:
    """The first pass's search bodies of `requests` as the API sends them."""
    made = []
    for request in requests:
        filters = f.from_query({k: v for k, v in request.items() if k != "limit"})
        query, _ = build_query(filters, mode, Etapa.EXATA)
        aggregations = facet_aggregations(f.facet_names(filters)) or None
        made.append({"query": query, "sort": listing_for(query).sort, "aggregations": aggregations})
    return made


def main() -> None:
    parser = cost_arguments(__doc__ or "")
    parser.add_argument("--endpoint", choices=sorted(MODES), default="seek")
    args = parser.parse_args()
    pid = elasticsearch_pid()
    es = Elasticsearch(args.elasticsearch, request_timeout=60)
    shapes = shapes_of(args.endpoint, args.elasticsearch, args.alias)
    means: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for shape, requests in shapes.items():
        sent = bodies(requests[: args.per_shape], MODES[args.endpoint])
        for _ in range(args.rounds):
            for variant, options in VARIANTS.items():
                for body in sent[:30]:
                    es.search(index=args.alias, size=21, track_total_hits=True, **options, **body)
                before, took = elasticsearch_cpu(pid), []
                for body in sent:
                    answer = es.search(
                        index=args.alias, size=21, track_total_hits=True, **options, **body
                    )
                    took.append(answer["took"])
                cpu = 1000 * (elasticsearch_cpu(pid) - before) / len(sent)
                means[variant].append(cpu)
                print(f"{','.join(shape):40} {variant:8} CPU {cpu:5.2f} ms a search, "
                      f"took {statistics.mean(took):5.2f} ms", flush=True)  # fmt: skip
    for variant, values in means.items():
        print(f"{variant}: {statistics.mean(values):.2f} ms of CPU a search, over the shapes")


if __name__ == "__main__":
    main()
