"""What the audit log's listing and writing cost on a large table, and what an index would change.

    .venv/bin/python scripts/bench_audit.py [--rows 10000000] [--write 100000] [--rounds 2]

Works in a database of its own, `<DATABASE_URL's database>_bench_audit`, made anew (and
migrated) on the server of `DATABASE_URL` and dropped at the end unless `--keep`. Fills
`auditoria` with `--rows` calls spread over 500 keys, five routes and a path per call, then
prints:

- the listing's own functions (`repository.page` of 51 rows and `repository.count`) in ms,
  for each filter of `FILTERS`;
- `--write` rows written by the log's own `repository.write` in batches of the writer's size,
  alternating without and with each candidate index of `CANDIDATES`, `--rounds` times.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.audit import repository
from app.audit.repository import Entrada, Filtro
from app.audit.writer import BATCH
from scripts.scratch import drop_database, fresh_database

FILL = """
INSERT INTO auditoria (chave_id, metodo, rota, operacao, caminho, ip, user_agent, status, em,
                       unidades)
SELECT 'k' || (g %% 500), 'GET',
  (ARRAY['/v1/cnpj/{cnpj}', '/v1/search', '/v1/seek', '/mcp', '/v1/cnpj/lote'])[1 + g %% 5],
  (ARRAY['consultar_cnpj', 'busca', 'busca', 'mcp', 'lote'])[1 + g %% 5],
  '/v1/cnpj/' || lpad((g::bigint * 7919 %% 99999999)::text, 14, '0'),
  '10.0.0.1', 'curl/8', (ARRAY[200, 200, 200, 404, 429])[1 + g %% 5],
  now() - interval '1 second' * (%(rows)s - g), 1
FROM generate_series(1, %(rows)s) g
"""
FILTERS = {
    "none": Filtro(),
    "rota, a busy route": Filtro(rota="/v1/search"),
    "rota, never seen": Filtro(rota="/v1/nada"),
    "rota, a path seen once": Filtro(rota="/v1/cnpj/00000000007919"),
    "chave": Filtro(chave="k7"),
    "status 404": Filtro(status=404),
    "chave and rota": Filtro(chave="k7", rota="/v1/search"),
}
CANDIDATES = {
    "(rota, id)": ["CREATE INDEX bench_rota ON auditoria (rota, id)"],
    "(rota, id) and (caminho, id)": [
        "CREATE INDEX bench_rota ON auditoria (rota, id)",
        "CREATE INDEX bench_caminho ON auditoria (caminho, id)",
    ],
}


async def listing(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for name, filtro in FILTERS.items():
            start = time.perf_counter()
            rows = await repository.page(conn, filtro, None, 51)
            middle = time.perf_counter()
            total = await repository.count(conn, filtro)
            end = time.perf_counter()
            print(f"{name:24} page {1000 * (middle - start):8.1f} ms ({len(rows)} rows)"
                  f"  total {1000 * (end - middle):8.1f} ms ({total})")  # fmt: skip


async def writing(url: str, count: int) -> float:
    now = dt.datetime.now(dt.UTC)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        start = time.perf_counter()
        for first in range(0, count, BATCH):
            rows = [
                Entrada(chave_id=f"k{n % 500}", metodo="GET", rota="/v1/cnpj/{cnpj}",
                        operacao="consultar_cnpj", caminho=f"/v1/cnpj/{n * 7919 % 99999999:014d}",
                        ip="10.0.0.1", user_agent="curl/8", status=200, em=now)
                for n in range(first, min(first + BATCH, count))
            ]  # fmt: skip
            await repository.write(conn, rows)
            await conn.commit()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--write", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()
    base = os.environ["DATABASE_URL"]
    name = urlsplit(base).path.strip("/") + "_bench_audit"
    url = fresh_database(base, name)
    try:
        start = time.perf_counter()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(FILL, {"rows": args.rows})
            conn.execute("ANALYZE auditoria")
        print(f"filled {args.rows:,} rows in {time.perf_counter() - start:.1f} s")
        asyncio.run(listing(url))
        for _ in range(args.rounds):
            for label, statements in CANDIDATES.items():
                took = asyncio.run(writing(url, args.write))
                print(f"write {args.write:,}: no index {took:.2f} s")
                with psycopg.connect(url, autocommit=True) as conn:
                    for statement in statements:
                        conn.execute(statement)
                took = asyncio.run(writing(url, args.write))
                print(f"write {args.write:,}: index {label} {took:.2f} s")
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("DROP INDEX IF EXISTS bench_rota, bench_caminho")
    finally:
        if not args.keep:
            drop_database(base, name)


if __name__ == "__main__":
    main()
