"""Latency of `/search`, `/seek` (and the autocomplete endpoints) at a fixed request rate, from
a separate process.

    .venv/bin/python scripts/bench_search.py --url http://127.0.0.1:8000 --alias empresas \
        [--endpoint search|seek|nome|cnae|cidade|busca|busca-cnae|busca-empresa] [--rate 50] \
        [--seconds 30]

Open-loop load: requests start on a fixed schedule whatever the answers' latency. Queries are
built from the alias's own documents: legal and trade names typed the sloppy ways of
`scripts/search_eval.py` (accents, typos, reordered words, prefixes, a first letter spelled
another way, `&` written `e`...) for `/search` and `/nome`; combinations of filters (UF, CNAE
prefix, CEP prefix, municipality, share capital, opening date, porte, situação, with and
without a name) for `/seek`; CNAE and city prefixes for the autocomplete endpoints. `busca`,
`busca-cnae` and `busca-empresa` are the analyst page's own requests (results with facets, as
htmx asks for them; the CNAE autocomplete; the page of one of the alias's companies), sent with
a dashboard session of the bench account. Prints the
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
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.codes import ADDRESS_UFS  # noqa: E402
from indexer.warm import SAMPLE_FIELDS, sample  # noqa: E402
from scripts.loadgen import bench_key, bench_session, open_loop  # noqa: E402
from scripts.search_eval import spelling_variants, variants  # noqa: E402

PATHS = {
    "search": "/v1/search",
    "seek": "/v1/seek",
    "nome": "/v1/nome",
    "cnae": "/v1/search/cnae",
    "cidade": "/v1/search/cidade",
    "busca": "/busca",
    "busca-cnae": "/busca/cnaes",
    "busca-empresa": "/busca/empresa/{cnpj}",
}
PAGES = {"busca", "busca-cnae", "busca-empresa"}
"""The analyst's page: what its own requests ask (htmx: the results with their facet counts; the
CNAE autocomplete; a company's page with its partners, related and similar companies), with a
dashboard session instead of a key."""
CNAE_TYPED = ["47", "4711", "56", "padaria", "comercio varej", "restaurante", "transporte",
              "construcao", "software", "consultoria", "86", "cabeleireiro", "farmac"]  # fmt: skip
CITY_TYPED = ["sao", "sao pau", "rio de", "belo hor", "curitiba", "porto", "campinas",
              "florianop", "salvador", "recife", "brasilia", "goiania", "natal"]  # fmt: skip


def sample_documents(es_url: str, alias: str, count: int, seed: int) -> list[dict[str, Any]]:
    fields = [*SAMPLE_FIELDS, "cnpj"]
    return sample(Elasticsearch(es_url, request_timeout=60), alias, count, seed, fields)


def requests_for(
    endpoint: str, documents: list[dict[str, Any]], rng: random.Random
) -> list[dict[str, str]]:
    made: list[dict[str, str]] = []
    for doc in documents:
        name = doc.get("nome_fantasia") or doc.get("razao_social") or ""
        address = doc.get("endereco") or {}
        cnae = (doc.get("cnae_principal") or {}).get("codigo") or "4781400"
        if endpoint == "busca" and name:
            typed = rng.choice(
                [*variants(name, rng).values(), *spelling_variants(name, rng).values()]
            )
            made.append({"q": typed})
        elif endpoint in ("search", "nome") and name:
            typed = rng.choice(
                [*variants(name, rng).values(), *spelling_variants(name, rng).values()]
            )
            made.append({"q" if endpoint == "search" else "nome": typed, "limit": "20"})
        elif endpoint == "seek":
            uf = address.get("uf") if address.get("uf") in ADDRESS_UFS else "SP"  # no dirty UF
            options: list[dict[str, Any]] = [
                {"uf": uf, "cnae": cnae[:2]},
                {"nome": name.split(" ")[0] if name else "comercio", "uf": uf},
                {"cep": (address.get("cep") or "01001000")[:5], "situacao": "ativa"},
                {"capital_min": "10000", "capital_max": "500000", "porte": "me,epp", "uf": uf},
                {"municipio": (address.get("municipio") or {}).get("codigo") or "7107",
                 "com_email": "true"},
                {"abertura_de": "2015-01-01", "abertura_ate": "2020-12-31", "cnae": cnae[:4],
                 "facets": "uf,situacao"},
            ]  # fmt: skip
            made.append(rng.choice(options))
        elif endpoint == "cnae":
            made.append({"query": rng.choice(CNAE_TYPED)})
        elif endpoint == "busca-empresa":
            made.append({"cnpj": doc["cnpj"]})
        elif endpoint == "busca-cnae":
            made.append({"cnae": rng.choice([t for t in CNAE_TYPED if not t.isdigit()])})
        elif endpoint == "cidade":
            made.append({"query": rng.choice(CITY_TYPED)})
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default=os.environ.get("INDEX_ALIAS", "empresas"))
    parser.add_argument(
        "--elasticsearch", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument("--endpoint", choices=sorted(PATHS), default="search")
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument(
        "--timeline", action="store_true", help="also print each second's statuses and p95"
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("API_KEY"),
        help="Bearer key (default: $API_KEY, else a new key of the bench plan)",
    )
    args = parser.parse_args()
    rng = random.Random(7)
    documents = sample_documents(args.elasticsearch, args.alias, args.sample, seed=7)
    params = requests_for(args.endpoint, documents, rng)
    path = PATHS[args.endpoint]

    page = args.endpoint in PAGES
    headers = {"HX-Request": "true"} if page else {}

    def make(session: aiohttp.ClientSession, rng: random.Random) -> Any:
        chosen = rng.choice(params)
        if "{cnpj}" in path:  # the company's page: the CNPJ is in the path
            return session.get(f"{args.url}{path.format(**chosen)}", headers=headers)
        return session.get(f"{args.url}{path}", params=chosen, headers=headers)

    if page:
        asyncio.run(
            open_loop(
                make, args.rate, args.seconds, path, cookies=bench_session(), timeline=args.timeline
            )
        )
    else:
        key = args.api_key or bench_key()
        asyncio.run(open_loop(make, args.rate, args.seconds, path, key, timeline=args.timeline))


if __name__ == "__main__":
    main()
