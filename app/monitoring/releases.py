"""Releases that went live, recorded in PostgreSQL with the job that checks every monitor
against them, in one transaction.

The indexer records its release right after the alias swap (`publish`), and a rollback records
the older release live again; the worker's periodic `conciliar_releases` records the live
release too, in case the indexer could not reach PostgreSQL. Recording the alias's current
release again does nothing, so the check runs once each time a release goes live.

The checks of an alias wait in a queue of their own (`queue_of`), which only that alias's
workers take: workers of other aliases sharing the database never see them. Each monitor
belongs to the alias it was created on, and a check looks only at that alias's monitors.
"""

from __future__ import annotations

import hashlib
import logging

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued
from psycopg import AsyncConnection

from app.monitoring import repository

log = logging.getLogger("app.monitoring")
CHECK = "verificar_release"
CONNECT_TIMEOUT = 10
SHARED_QUEUES = ("monitoramento", "webhooks", "lotes", "manutencao", "builtin")
"""The queues every worker takes, whatever its alias (`builtin`: the queue library's own)."""


def queue_of(alias: str, kind: str = "releases") -> str:
    """The queue of `alias`'s release checks (or of its lots, `kind="lotes"`): readable, and
    short enough for PostgreSQL's 63-byte notification channel the queue's name goes into
    (aliases reach 100 characters)."""
    digest = hashlib.sha256(alias.encode()).hexdigest()[:8]
    return f"{kind}:{alias[:20]}:{digest}"


def queues_of(alias: str) -> list[str]:
    """The queues a worker of `alias` takes jobs from: the shared ones, its release checks and
    its lots (made from its own index, into its own folder)."""
    return [*SHARED_QUEUES, queue_of(alias), queue_of(alias, "lotes")]


async def defer_check(
    queue: procrastinate.App, alias: str, indice: str, conn: AsyncConnection | None = None
) -> None:
    """Defers the check of every monitor against `indice` to `alias`'s queue, in the caller's
    transaction when `conn` is given. A check of `indice` that still waits (a release live
    again before its first check ran) is that same check: nothing more is deferred."""
    task = queue.configure_task(
        CHECK, connection=conn, queue=queue_of(alias), queueing_lock=f"release:{indice}"
    )
    try:
        if conn is None:
            await task.defer_async(indice=indice, alias=alias)
            return
        async with conn.transaction():  # a savepoint: a refusal keeps the caller's transaction
            await task.defer_async(indice=indice, alias=alias)
    except AlreadyEnqueued:
        log.info("a check of release %s already waits", indice)


async def record(conn: AsyncConnection, queue: procrastinate.App, alias: str, indice: str) -> bool:
    """Records `indice` as live for `alias` and defers its check, in the caller's transaction;
    False when it already was the alias's current release."""
    if await repository.record_release(conn, alias, indice) is None:
        return False
    await defer_check(queue, alias, indice, conn)
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
