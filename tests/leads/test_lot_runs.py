"""A lot's runs as the worker makes them, driven in-process against the real database and
index. Two runs of one lot: the worker's recovery starts a lot again elsewhere when its first
run looks stalled, and the first run may still be alive; only the latest run publishes its file
and finishes (or fails) the lot, the other drops its file, whatever order they end in. And a lot
that no run made within a day is given up, its allowance back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import psycopg
from psycopg_pool import AsyncConnectionPool

from app.accounts.keys import check_secret
from app.context import Backends
from app.leads import lots, repository
from app.leads.storage import Directory
from app.lib.elastic import create_client
from app.lib.paging import Cursors
from app.settings import get_settings
from app.webhooks.delivery import Sender
from app.worker.queue import queue
from tests.conftest import Issued, MakeKey, Server
from tests.leads.conftest import SMALL_PLAN, get, ok
from tests.leads.release import RESTAURANT

ASKED = {"cnae": RESTAURANT, "uf": "PR,SP,RJ", "quantidade": 7, "formato": "csv",
         "confirmar_lgpd": True, "uso_responsavel": True}  # fmt: skip


@contextlib.asynccontextmanager
async def _backends(database: str, alias: str, lots_dir: Path) -> AsyncIterator[Backends]:
    """What a worker's jobs get, for the release `alias` and the lots directory."""
    settings = msgspec.structs.replace(get_settings(), index_alias=alias, lots_dir=str(lots_dir))
    secret = check_secret(settings.api_key_secret)
    async with AsyncConnectionPool(database, min_size=1, max_size=2,
                                   kwargs={"autocommit": True}) as pool:  # fmt: skip
        backends = Backends(
            es=create_client(settings.elasticsearch_url, settings.request_timeout), pool=pool,
            settings=settings, cursors=Cursors(secret), secret=secret, queue=queue,
            sender=Sender.of(settings),
        )  # fmt: skip
        try:
            yield backends
        finally:
            await backends.es.close()


def _create(server: Server, key: Issued, body: dict[str, Any]) -> int:
    with server.client(headers=key.headers, timeout=30) as client:
        created = client.post("/v1/me/lotes", json=body)
    assert created.status_code == 201, created.text
    return int(created.json()["lote"]["id"])


async def _two_runs(database: str, alias: str, lots_dir: Path, lote_id: int) -> None:
    async with _backends(database, alias, lots_dir) as backends:
        pool = backends.pool
        async with pool.connection() as conn:  # the first run: started, then "stalled"
            stale = await repository.start(conn, lote_id)
        assert stale is not None
        name = f"lote-{lote_id}.csv"
        store = Directory(lots_dir)
        stale_file = store.staging(name, stale.tentativas)
        stale_file.write_bytes(b"half a file")
        # The recovery's run makes the lot meanwhile, and drops the stale run's staging file.
        assert await lots.processar(backends, lote_id) == "concluido"
        assert not stale_file.exists()
        made = (lots_dir / name).read_bytes()
        assert made.count(b"\n") == 8  # the header and the 7 leads
        # The stale run comes back with its file: it may not publish it, nor fail the lot.
        stale_file.write_bytes(b"the stale run's file")
        assert await lots._publish(backends, stale, name, written=7) is False
        assert not stale_file.exists()
        assert (lots_dir / name).read_bytes() == made
        async with pool.connection() as conn:
            assert await repository.fail(conn, lote_id, stale.tentativas, "tarde") is False
            row = await repository.find(conn, lote_id)
        assert row is not None
        assert (row.estado, row.linhas, row.tentativas) == ("concluido", 7, 2)


def test_a_run_taken_over_by_a_later_one_publishes_nothing(
    leads_server: Server, paid_key: Issued, database: str, leads_alias: str, lots_dir: Path
) -> None:
    lote_id = _create(leads_server, paid_key, ASKED)
    asyncio.run(_two_runs(database, leads_alias, lots_dir, lote_id))
    shown = ok(get(leads_server, paid_key, f"/v1/me/lotes/{lote_id}"))
    assert (shown["estado"], shown["linhas"]) == ("concluido", 7)


def test_a_lot_not_made_within_a_day_is_given_up_and_its_allowance_freed(
    leads_server: Server,
    make_key: MakeKey,
    plans: None,
    database: str,
    leads_alias: str,
    lots_dir: Path,
) -> None:
    """No worker made it (none for its release, or each run failed before it could say so):
    the periodic round fails it with `lote.falhou`, and the month's allowance has room again."""
    key = make_key(SMALL_PLAN)  # 1,000 leads a month
    hook = "http://127.0.0.1:9/desistido"
    old = _create(leads_server, key, {**ASKED, "quantidade": 600, "webhook_url": hook})
    recent = _create(leads_server, key, {**ASKED, "quantidade": 300})
    with psycopg.connect(database) as conn:
        conn.execute("UPDATE lotes SET criado_em = now() - interval '25 hours' WHERE id = %s",
                     (old,))  # fmt: skip

    async def round_() -> int:
        async with _backends(database, leads_alias, lots_dir) as backends:
            return await lots.desistir(backends)

    assert asyncio.run(round_()) >= 1
    given_up = ok(get(leads_server, key, f"/v1/me/lotes/{old}"))
    assert given_up["estado"] == "falhou"
    assert "24 horas" in given_up["erro"]
    assert ok(get(leads_server, key, f"/v1/me/lotes/{recent}"))["estado"] == "pendente"
    assert _create(leads_server, key, {**ASKED, "quantidade": 600})  # the 600 are back
    with psycopg.connect(database) as conn:
        events = conn.execute(
            "SELECT tipo, corpo->'data'->>'estado' FROM entregas WHERE lote_id = %s", (old,)
        ).fetchall()
    assert events == [("lote.falhou", "falhou")]
