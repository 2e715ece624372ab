"""`registry-worker`: runs the job queue's tasks (webhook deliveries, release checks, lots).

Start as many as wanted, on as many machines as wanted: they share the queue in PostgreSQL,
each job runs once at a time, and the jobs of a worker that dies are run again by the others.
"""

from __future__ import annotations

import asyncio
import logging

import typer
from psycopg_pool import AsyncConnectionPool

from app.accounts.keys import check_secret
from app.context import Backends
from app.lib.elastic import create_client
from app.lib.paging import Cursors
from app.monitoring.service import RetryLater
from app.settings import get_settings
from app.worker.queue import queue


class QuietRetries(logging.Filter):
    """A delivery to retry is a normal outcome, logged by the queue with its exception: keep
    its one line, drop the traceback (so a traceback in the log always means a real error)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], RetryLater):
            record.exc_info = None
            record.exc_text = None
        return True


app = typer.Typer(help="The worker of the CNPJ registry's job queue.", add_completion=False)


async def _run(concurrency: int) -> None:
    settings = get_settings()
    secret = check_secret(settings.api_key_secret)
    es = create_client(settings.elasticsearch_url, settings.request_timeout)
    pool = AsyncConnectionPool(
        settings.database_url,
        min_size=1,
        max_size=concurrency + 4,
        open=False,
        kwargs={"autocommit": True},
    )
    await pool.open(wait=True)
    # The queue runs on a pool of its own: its listener opens a connection with the pool's
    # options plus `autocommit`, which the services' autocommit pool already sets.
    queue_pool = AsyncConnectionPool(
        settings.database_url,
        min_size=1,
        max_size=concurrency + 2,
        open=False,
        check=AsyncConnectionPool.check_connection,
    )
    await queue_pool.open(wait=True)
    await queue.open_async(pool=queue_pool)
    backends = Backends(
        es=es, pool=pool, settings=settings, cursors=Cursors(secret), secret=secret, queue=queue
    )
    try:
        await queue.run_worker_async(
            concurrency=concurrency,
            update_heartbeat_interval=settings.worker_heartbeat,
            stalled_worker_timeout=settings.worker_stalled_after,
            additional_context={"backends": backends},
            install_signal_handlers=True,
        )
    finally:
        await queue.close_async()
        await queue_pool.close()
        await pool.close()
        await es.close()


@app.command()
def run(
    concurrency: int = typer.Option(
        0,
        envvar="WORKER_CONCURRENCY",
        help="Jobs at once (default: the WORKER_CONCURRENCY setting).",
    ),
) -> None:
    """Run jobs until interrupted (SIGTERM lets the running jobs finish)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("elastic_transport").setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(QuietRetries())
    asyncio.run(_run(concurrency or get_settings().worker_concurrency))
