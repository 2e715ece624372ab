"""Lead lots and lead pages on a generated month: for each format, the time to make a lot of
`--rows` leads, the worker's peak memory and the file's size; then the latency of ranked lead
pages (`GET /v1/leads`, 100 leads a page).

    .venv/bin/python scripts/bench_leads.py [--establishments 60000] [--rows 10000] \
        [--big 30000] [--pages 200] [--out bench-out]

Runs on the services of `scripts/services.sh env` (with `API_KEY_SECRET` set), in a database
and an alias of its own, both removed at the end. The month is generated once
(scripts/generate_month.py, fixed seed, cached under --out) and loaded into the alias
`bench-leads`. Each lot is made by a fresh `registry-worker` process, so its peak resident
memory (VmHWM) is that lot's; `feito_em_s` is the lot's own time (from `iniciado_em` to
`concluido_em`), `pedido_ao_arquivo_s` the time from the request to the file, which includes
the new worker's start; `--big` makes one more CSV and XLSX lot of that size, to show
the memory does not grow with the rows. The filters are every active company of every UF.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402

from app.accounts import service as accounts  # noqa: E402
from app.accounts.keys import check_secret  # noqa: E402
from app.domain import codes  # noqa: E402
from app.settings import get_settings  # noqa: E402
from indexer import elastic  # noqa: E402
from scripts.scratch import drop_database, free_port, fresh_database  # noqa: E402

ALIAS = "bench-leads"
DATABASE = "registry_bench_leads"
PLAN = "bench-leads"
FILTERS = {"uf": ",".join(sorted(codes.UF_NOMES))}
LGPD = {"confirmar_lgpd": True, "uso_responsavel": True}


def _key(database: str) -> str:
    async def issue() -> str:
        secret = check_secret(get_settings().api_key_secret)
        async with await psycopg.AsyncConnection.connect(database) as conn:
            conta, _ = await accounts.ensure_account(
                conn, nome="Bench", email="bench-leads@example.com", telefone="", plano=PLAN,
                papel="usuario",
            )  # fmt: skip
            issued = await accounts.issue_key(conn, secret, conta.id, "bench", [])
        return issued.api_key

    return asyncio.run(issue())


def _month(out: Path, size: int) -> Path:
    folder = out / f"month-{size}"
    marker = folder / ".generated"
    if not marker.exists() or marker.read_text() != f"{size} 7":
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "generate_month.py"), str(folder),
             "--establishments", str(size), "--seed", "7"],
            check=True,
        )  # fmt: skip
        marker.write_text(f"{size} 7")
    return folder


def _env(database: str, lots: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database, "INDEX_ALIAS": ALIAS, "LOTS_DIR": str(lots)}


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _lot(client: httpx.Client, env: dict[str, str], rows: int, formato: str) -> dict[str, Any]:
    worker = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "registry-worker")], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        started = time.perf_counter()
        created = client.post("/v1/me/lotes", json={**FILTERS, "quantidade": rows,
                                                     "formato": formato, **LGPD})  # fmt: skip
        created.raise_for_status()
        lote_id = created.json()["lote"]["id"]
        while True:
            lote = client.get(f"/v1/me/lotes/{lote_id}").json()
            if lote["estado"] in ("concluido", "falhou"):
                break
            time.sleep(0.05)
        wall = time.perf_counter() - started
        peak = _peak_rss_mib(worker.pid)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    if lote["estado"] != "concluido":
        raise SystemExit(f"lot failed: {lote['erro']}")
    made = (datetime.fromisoformat(lote["concluido_em"])
            - datetime.fromisoformat(lote["iniciado_em"])).total_seconds()  # fmt: skip
    return {"formato": formato, "linhas": lote["linhas"], "feito_em_s": round(made, 2),
            "linhas_por_s": round(lote["linhas"] / made), "pedido_ao_arquivo_s": round(wall, 2),
            "mb": round(lote["tamanho"] / 2**20, 2), "pico_rss_mib": round(peak)}  # fmt: skip


def _pages(client: httpx.Client, count: int) -> dict[str, float]:
    latencies: list[float] = []
    cursor = None
    for _ in range(count):
        params: dict[str, Any] = {**FILTERS, "limit": 100}
        if cursor:
            params["cursor"] = cursor
        started = time.perf_counter()
        response = client.get("/v1/leads", params=params)
        latencies.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        cursor = response.json()["next_cursor"]
    cuts = statistics.quantiles(latencies, n=100)
    return {"paginas": count, "p50_ms": round(cuts[49], 1), "p95_ms": round(cuts[94], 1),
            "p99_ms": round(cuts[98], 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--establishments", type=int, default=60_000)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=30_000)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out")
    args = parser.parse_args()
    settings = get_settings()
    month = _month(args.out, args.establishments)
    database = fresh_database(settings.database_url, DATABASE, (PLAN, 1_000_000, 100_000_000))
    lots = Path(tempfile.mkdtemp(prefix="bench-lots-"))
    env = _env(database, lots)
    es = elastic.connect(settings.elasticsearch_url)
    server = None
    try:
        subprocess.run(
            [str(ROOT / ".venv" / "bin" / "indexer"), "load", str(month), "--alias", ALIAS],
            env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        key = _key(database)
        port = free_port()
        server = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "registry-api"), "--port", str(port), "--workers", "2"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                          headers={"Authorization": f"Bearer {key}"}) as client:  # fmt: skip
            for _ in range(100):
                try:
                    client.get("/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            total = client.get("/v1/leads/contagem", params=FILTERS).json()["total"]
            print(f"release: {args.establishments} establishments, {total} active leads")
            if total < args.rows:
                raise SystemExit(f"only {total} leads: raise --establishments")
            for formato in ("csv", "xlsx", "pdf"):
                print(_lot(client, env, args.rows, formato))
            if args.big and total >= args.big:
                for formato in ("csv", "xlsx"):
                    print(_lot(client, env, args.big, formato))
            print(_pages(client, args.pages))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        for info in elastic.list_indices(es, ALIAS):
            elastic.delete_release(es, info.name)
        drop_database(settings.database_url, DATABASE)
        shutil.rmtree(lots, ignore_errors=True)


if __name__ == "__main__":
    main()
