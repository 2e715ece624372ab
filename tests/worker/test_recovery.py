"""Stalled-job recovery against the real queue in PostgreSQL: a stalled job that ends while
the recovery is about to run it again is left as it ended. The recovery's `retry_job` waits on
the row the job's end holds, then finds the job no longer `doing`; the queue refuses it, which
is the outcome wanted (`recuperar_travados` logs it and goes on), not a failure of the task."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

import msgspec
import psycopg
import pytest
from procrastinate import JobContext, sql
from psycopg_pool import AsyncConnectionPool

from app.accounts.keys import check_secret
from app.context import Backends
from app.lib.elastic import create_client
from app.lib.paging import Cursors
from app.settings import get_settings
from app.webhooks.delivery import Sender
from app.worker.queue import queue, recuperar_travados

AGES = 10 * 365 * 86400
"""The heartbeat age of this test's worker; the recovery looks for workers silent for half of
it, so the stalled jobs of other workers on the same database are not this test's business."""


async def _waiting_on_lock(conn: psycopg.AsyncConnection, application: str) -> bool:
    cursor = await conn.execute(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = %s AND wait_event_type = 'Lock'",
        (application,),
    )
    row = await cursor.fetchone()
    return row is not None and row[0] > 0


async def _job_ends_during_recovery(database: str) -> tuple[int, str]:
    name = f"teste-recuperacao-{uuid.uuid4().hex[:8]}"
    base = get_settings()
    settings = msgspec.structs.replace(base, worker_stalled_after=AGES / 2)
    secret = check_secret(settings.api_key_secret)
    queue_pool = AsyncConnectionPool(
        database, min_size=1, max_size=2, open=False,
        kwargs={"autocommit": True, "application_name": name},
    )  # fmt: skip
    pool = AsyncConnectionPool(database, min_size=1, max_size=1, open=False)
    await queue_pool.open(wait=True)
    await pool.open(wait=True)
    await queue.open_async(pool=queue_pool)
    backends = Backends(
        es=create_client(settings.elasticsearch_url, settings.request_timeout), pool=pool,
        settings=settings, cursors=Cursors(secret), secret=secret, queue=queue,
        sender=Sender.of(settings),
    )  # fmt: skip
    manager = queue.job_manager
    try:
        job_id = await queue.configure_task("teste_recuperacao", queue=name).defer_async()
        worker_id = await manager.register_worker()
        job = await manager.fetch_job([name], worker_id)
        assert job is not None
        assert job.id == job_id
        context = JobContext(
            app=queue, job=job, start_timestamp=time.time(), abort_reason=lambda: None,
            additional_context={"backends": backends},
        )  # fmt: skip
        async with (
            await psycopg.AsyncConnection.connect(database) as ending,
            await psycopg.AsyncConnection.connect(database, autocommit=True) as watcher,
        ):
            # The job's own end, by the query a worker ends it with, not committed yet.
            await ending.execute(
                sql.queries["finish_job"],
                {"job_id": job_id, "status": "succeeded", "delete_job": False},
            )
            await watcher.execute(
                "UPDATE procrastinate_workers "
                "SET last_heartbeat = now() - make_interval(secs => %s) WHERE id = %s",
                (AGES, worker_id),
            )
            recovery = asyncio.create_task(recuperar_travados.func(context, int(time.time())))
            deadline = time.monotonic() + 30
            while not await _waiting_on_lock(watcher, name):
                assert not recovery.done(), recovery
                assert time.monotonic() < deadline, "the recovery never reached the job"
                await asyncio.sleep(0.05)
            await ending.commit()
            await recovery
            cursor = await watcher.execute(
                "SELECT status FROM procrastinate_jobs WHERE id = %s", (job_id,)
            )
            row = await cursor.fetchone()
            await watcher.execute("DELETE FROM procrastinate_jobs WHERE id = %s", (job_id,))
            await watcher.execute("DELETE FROM procrastinate_workers WHERE id = %s", (worker_id,))
        assert row is not None
        return job_id, str(row[0])
    finally:
        # Whatever happened, no job of this test's task (which no worker knows) is left for a
        # worker of another test to find stalled and run.
        async with await psycopg.AsyncConnection.connect(database, autocommit=True) as cleanup:
            await cleanup.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s", (name,))
        await queue.close_async()
        await backends.sender.close()
        await backends.es.close()
        await pool.close()
        await queue_pool.close()


def test_stalled_job_that_ends_during_recovery_is_left_ended(
    database: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="app.worker"):
        job_id, status = asyncio.run(_job_ends_during_recovery(database))
    assert status == "succeeded"
    messages = [record.getMessage() for record in caplog.records if record.name == "app.worker"]
    assert f"job {job_id} was already taken care of" in messages
