"""Two runs of one lot: the worker's recovery starts a lot again elsewhere when its first run
looks stalled, and the first run may still be alive. Only the latest run publishes its file
and finishes (or fails) the lot; the other drops its file, whatever order they end in."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
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
from tests.conftest import Issued, Server
from tests.leads.conftest import get, ok
from tests.leads.release import RESTAURANT

ASKED = {"cnae": RESTAURANT, "uf": "PR,SP,RJ", "quantidade": 7, "formato": "csv",
         "confirmar_lgpd": True, "uso_responsavel": True}  # fmt: skip


async def _two_runs(database: str, alias: str, lots_dir: Path, lote_id: int) -> None:
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
        finally:
            await backends.es.close()


def test_a_run_taken_over_by_a_later_one_publishes_nothing(
    leads_server: Server, paid_key: Issued, database: str, leads_alias: str, lots_dir: Path
) -> None:
    with leads_server.client(headers=paid_key.headers, timeout=30) as client:
        created = client.post("/v1/me/lotes", json=ASKED)
    assert created.status_code == 201, created.text
    lote_id = created.json()["lote"]["id"]
    asyncio.run(_two_runs(database, leads_alias, lots_dir, lote_id))
    shown = ok(get(leads_server, paid_key, f"/v1/me/lotes/{lote_id}"))
    assert (shown["estado"], shown["linhas"]) == ("concluido", 7)
