"""From a release swap to delivered webhooks: events per second, time until the last one
arrives, the worker's memory.

    .venv/bin/python scripts/bench_webhooks.py [--monitors 10000] [--workers 1] \
        [--concurrency 8] [--timeout 900]

Runs on the services of `scripts/services.sh env` (with `API_KEY_SECRET` set), in a database
and an alias of its own, both removed at the end: it loads the bundled sample as a first
release, creates `--monitors` monitors over its establishments (several per CNPJ, each with
its own URL) at a receiver on loopback, starts `--workers` `registry-worker` processes, then
loads a second release in which every establishment's trade name changed. The indexer records
the release after its alias swap; the workers check every monitor and deliver one
`empresa.alterada` per monitor. The receiver (another process) verifies every signature.

Prints the check's duration, the time from the swap to the first and the last delivery,
events per second over that span, duplicates, signature failures, and each worker's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
import psycopg  # noqa: E402

from app.accounts import service as accounts  # noqa: E402
from app.accounts.keys import check_secret  # noqa: E402
from app.lib.elastic import body, create_client  # noqa: E402
from app.lookup.service import find_companies  # noqa: E402
from app.monitoring import repository  # noqa: E402
from app.settings import get_settings  # noqa: E402
from app.webhooks import signing  # noqa: E402
from indexer import elastic  # noqa: E402
from scripts.scratch import drop_database, fresh_database  # noqa: E402

SAMPLE = ROOT / "fixtures" / "sample"
DATABASE = "registry_bench_webhooks"
ALIAS = "bench-webhooks"


# ---------------------------------------------------------------- the receiver (own process)


def receive(port: int, secrets_file: Path) -> None:
    """`POST /hook/<n>`: verifies the signature with monitor n's secret and answers 200;
    `GET /stats`: what arrived."""
    from aiohttp import web
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError

    secrets = {
        name: Webhook(secret) for name, secret in json.loads(secrets_file.read_text()).items()
    }
    seen: dict[str, int] = {}
    stats: dict[str, Any] = {"received": 0, "bad_signatures": 0, "first": None, "last": None}

    async def hook(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            secrets[request.match_info["name"]].verify(body, dict(request.headers))
        except (KeyError, WebhookVerificationError):
            stats["bad_signatures"] += 1
            return web.Response(status=400)
        now = time.time()
        stats["received"] += 1
        stats["first"] = stats["first"] or now
        stats["last"] = now
        message = request.headers["webhook-id"]
        seen[message] = seen.get(message, 0) + 1
        return web.Response(text="ok")

    async def report(_: web.Request) -> web.Response:
        return web.json_response({**stats, "unique": len(seen)})

    app = web.Application()
    app.router.add_post("/hook/{name}", hook)
    app.router.add_get("/stats", report)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


# ---------------------------------------------------------------- setup


def releases(workdir: Path) -> tuple[Path, Path]:
    """The sample, and a copy where every establishment's trade name changed."""
    first, second = workdir / "first", workdir / "second"
    shutil.copytree(SAMPLE, first)
    shutil.copytree(SAMPLE, second)
    with (first / "ESTABELE.csv").open(encoding="latin-1", newline="") as handle:
        rows = list(csv.reader(handle, delimiter=";"))
    for row in rows:
        row[4] = (row[4] + " NOVA FASE").strip()
    with (second / "ESTABELE.csv").open("w", encoding="latin-1", newline="") as handle:
        csv.writer(handle, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
            rows
        )
    return first, second


def _env(database: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database, "INDEX_ALIAS": ALIAS, **extra}


def _load(path: Path, database: str) -> None:
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "indexer"), "load", str(path), "--alias", ALIAS],
        env=_env(database), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def make_monitors(database: str, count: int, port: int, alias: str = ALIAS) -> dict[str, str]:
    """`count` monitors of one enterprise account over the establishments of `alias`, with
    their baselines, delivering to the receiver on `port`; the secrets by receiver name."""
    settings = get_settings()
    secret = check_secret(settings.api_key_secret)
    es = create_client(settings.elasticsearch_url, settings.request_timeout)
    try:
        response = await es.search(
            index=alias, size=10000, source_includes=["cnpj"], query={"match_all": {}}
        )
        hits = msgspec.json.decode(body(response))["hits"]["hits"]
        numbers = sorted(hit["_source"]["cnpj"] for hit in hits)
        companies = []
        for start in range(0, len(numbers), 500):
            companies += await find_companies(es, alias, numbers[start : start + 500])
        [live] = msgspec.json.decode(body(await es.indices.get_alias(name=alias)))
    finally:
        await es.close()
    companies.sort(key=lambda company: company.cnpj)
    found: dict[str, str] = {}
    async with await psycopg.AsyncConnection.connect(database) as conn:
        conta, _ = await accounts.ensure_account(
            conn, nome="Bench", email="bench-webhooks@example.com", telefone="",
            plano="enterprise", papel="usuario",
        )  # fmt: skip
        async with conn.transaction():
            for n in range(count):
                company = companies[n % len(companies)]
                salt = signing.new_salt()
                vigia = await repository.insert_monitor(
                    conn, conta_id=conta.id, cnpj=company.cnpj,
                    webhook_url=f"http://127.0.0.1:{port}/hook/{n}",
                    eventos=["empresa.alterada", "empresa.removida"], descricao="bench",
                    sal=salt, referencia=msgspec.to_builtins(company),
                    referencia_hash=company.hash, indice=live, alias=alias,
                )  # fmt: skip
                assert vigia is not None
                found[str(n)] = signing.secret_of(secret, vigia.id, salt)
    return found


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def receiver_stats(port: int) -> dict[str, Any]:
    import httpx

    found: dict[str, Any] = httpx.get(f"http://127.0.0.1:{port}/stats", timeout=5).json()
    return found


def _wait_checked(database: str, index_like: str, seconds: float) -> tuple[float, float]:
    """The release's recording and check times (epoch seconds), once checked."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT extract(epoch FROM publicada_em), extract(epoch FROM verificada_em) "
                "FROM releases WHERE indice = %s AND verificada_em IS NOT NULL",
                (index_like,),
            ).fetchone()
        if row:
            return float(row[0]), float(row[1])
        time.sleep(0.2)
    raise SystemExit(f"release {index_like} not checked within {seconds} s")


def _live(es: Any) -> str:
    [name] = es.indices.get_alias(name=ALIAS).body
    return str(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--monitors", type=int, default=10000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    settings = get_settings()
    es = elastic.connect(settings.elasticsearch_url)
    database = fresh_database(settings.database_url, DATABASE)
    workdir = Path(tempfile.mkdtemp(prefix="bench-webhooks-"))
    processes: list[subprocess.Popen[bytes]] = []
    try:
        first, second = releases(workdir)
        _load(first, database)
        from socket import socket

        with socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        secrets = asyncio.run(make_monitors(database, args.monitors, port))
        secrets_file = workdir / "secrets.json"
        secrets_file.write_text(json.dumps(secrets))
        receiver = subprocess.Popen(
            [sys.executable, __file__, "--receive", str(port), str(secrets_file)]
        )
        processes.append(receiver)
        worker_env = _env(
            database, WEBHOOK_ALLOW_NETWORKS="127.0.0.0/8", WEBHOOK_ALLOW_HTTP="true",
            WORKER_CONCURRENCY=str(args.concurrency),
        )  # fmt: skip
        log = (workdir / "workers.log").open("wb")
        workers = [
            subprocess.Popen([str(ROOT / ".venv" / "bin" / "registry-worker")], env=worker_env,
                             stdout=log, stderr=subprocess.STDOUT)
            for _ in range(args.workers)
        ]  # fmt: skip
        processes.extend(workers)
        _wait_checked(database, _live(es), 120)  # the first release: baselines agree, no event
        assert receiver_stats(port)["received"] == 0

        print(f"monitors {args.monitors}, workers {args.workers} x concurrency {args.concurrency}")
        _load(second, database)
        published, checked = _wait_checked(database, _live(es), args.timeout)
        deadline = time.monotonic() + args.timeout
        while (stats := receiver_stats(port))["unique"] < args.monitors:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {stats['unique']} of {args.monitors} within the timeout")
            time.sleep(0.2)
        span = stats["last"] - published
        print(f"check of every monitor: {checked - published:.2f} s after the swap")
        print(f"first delivery:         {stats['first'] - published:.2f} s after the swap")
        print(f"last delivery:          {span:.2f} s after the swap")
        print(f"events/s (swap to last): {args.monitors / span:.0f}")
        print(f"delivered {stats['unique']}, duplicates {stats['received'] - stats['unique']}, "
              f"bad signatures {stats['bad_signatures']}")  # fmt: skip
        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT count(*), sum(attempts) FROM procrastinate_jobs "
                "WHERE task_name = 'entregar_webhook'"
            ).fetchone()
        assert row is not None
        print(f"delivery jobs {row[0]}, runs {row[1]} (a run beyond the first: postponed, "
              "its endpoint's share busy)")  # fmt: skip
        for n, worker in enumerate(workers):
            print(f"worker {n} peak RSS: {peak_rss_mib(worker.pid):.0f} MiB")
        print(f"receiver peak RSS: {peak_rss_mib(receiver.pid):.0f} MiB")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(30)
        for info in elastic.list_indices(es, ALIAS):
            elastic.delete_release(es, info.name)
        es.close()
        drop_database(settings.database_url, DATABASE)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--receive":
        receive(int(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
