"""Releases that went live, recorded in PostgreSQL with the job that checks every monitor
against them, in one transaction.

The indexer records its release right after the alias swap (`publish`); the worker's periodic
`conciliar_releases` records the live release too, in case the indexer could not reach
PostgreSQL. Recording twice does nothing the second time, so the check runs once per release.
"""

from __future__ import annotations

import procrastinate
from psycopg import AsyncConnection

from app.monitoring import repository

CHECK = "verificar_release"
CONNECT_TIMEOUT = 10


async def record(conn: AsyncConnection, queue: procrastinate.App, alias: str, indice: str) -> bool:
    """Records `indice` as live for `alias` and defers its check, in the caller's transaction;
    False when it was already recorded."""
    if await repository.record_release(conn, alias, indice) is None:
        return False
    await queue.configure_task(
        CHECK, connection=conn, queue="monitoramento", queueing_lock=f"release:{indice}"
    ).defer_async(indice=indice, alias=alias)
    return True


async def publish(database_url: str, alias: str, indice: str) -> bool:
    """`record` from a process without a pool of its own (the indexer), on one connection
    (given `CONNECT_TIMEOUT` seconds)."""
    from app.worker.queue import queue  # the queue's tasks import the monitoring services

    async with (
        await AsyncConnection.connect(
            database_url, autocommit=True, connect_timeout=CONNECT_TIMEOUT
        ) as conn,
        conn.transaction(),
    ):
        return await record(conn, queue, alias, indice)
