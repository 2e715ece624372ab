"""`registry-worker`: runs the job queue's tasks (webhook deliveries, release checks, lots).

Start as many as wanted, on as many machines as wanted: they share the queue in PostgreSQL,
each job runs once at a time, and the jobs of a worker that dies are run again by the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time

import psycopg
import typer
from procrastinate.exceptions import ConnectorException
from psycopg import AsyncConnection
from psycopg_pool import PoolTimeout

from app.accounts.keys import check_secret
from app.context import Backends
from app.lib.database import connection_pool
from app.lib.elastic import create_client
from app.lib.paging import Cursors
from app.monitoring import releases
from app.monitoring.service import Later
from app.settings import get_settings
from app.webhooks.delivery import Sender
from app.worker.queue import queue


class QuietRetries(logging.Filter):
    """A delivery to retry is a normal outcome, logged by the queue with its exception: keep
    its one line, drop the traceback (so a traceback in the log always means a real error)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], Later):
            record.exc_info = None
            record.exc_text = None
        return True


class QuietHousekeeping(logging.Filter):
    """The periodic housekeeping tasks run every few seconds: their routine INFO lines (deferred,
    started, ended) are dropped; their warnings and errors are kept."""

    TASKS = frozenset({"recuperar_travados", "conciliar_releases"})

    def filter(self, record: logging.LogRecord) -> bool:
        job = getattr(record, "job", None)
        if record.levelno >= logging.WARNING or not isinstance(job, dict):
            return True
        return job.get("task_name") not in self.TASKS


log = logging.getLogger("app.worker")
RESTART_MAX = 30.0


app = typer.Typer(help="The worker of the CNPJ registry's job queue.", add_completion=False)


async def _autocommit(conn: AsyncConnection) -> None:
    await conn.set_autocommit(True)


async def _run(concurrency: int) -> None:
    settings = get_settings()
    secret = check_secret(settings.api_key_secret)
    es = create_client(settings.elasticsearch_url, settings.request_timeout)
    pool = connection_pool(
        settings.database_url, max_size=concurrency + 4, kwargs={"autocommit": True}
    )
    await pool.open(wait=False)
    # The queue runs on a pool of its own: its listener opens a connection with the pool's
    # options plus `autocommit=True`, which clashes with the services' `autocommit` option.
    # Its connections are made autocommit once opened instead: each queue query (one stored
    # function) is then its own transaction, with no COMMIT round trip after it.
    queue_pool = connection_pool(
        settings.database_url, max_size=concurrency + 2, configure=_autocommit
    )
    await queue_pool.open(wait=False)
    await queue.open_async(pool=queue_pool)
    backends = Backends(
        es=es, pool=pool, settings=settings, cursors=Cursors(secret), secret=secret, queue=queue,
        sender=Sender.of(settings),
    )  # fmt: skip
    try:
        await _work(backends, concurrency)
    finally:
        await queue.close_async()
        await backends.sender.close()
        await queue_pool.close()
        await pool.close()
        await es.close()


async def _work(backends: Backends, concurrency: int) -> None:
    """Runs the queue's worker until SIGTERM or SIGINT stops it (the running jobs finish first).

    When the database goes away under it, the queue's worker stops: with an error, or quietly
    when its listener was the part that failed. Either way, unless a signal asked for the stop,
    it starts again, waiting longer each time up to `RESTART_MAX` seconds, until the database
    answers; the jobs that were running are run again by the stalled-job recovery. A broken
    pooled connection fails its query once and is replaced, so nothing checks connections
    before each query."""
    settings = backends.settings
    stopping = asyncio.Event()
    running: list[asyncio.Task[None]] = []

    def stop() -> None:  # the queue's worker stops gracefully when its task is cancelled
        stopping.set()
        for task in running:
            task.cancel()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop)
    delay = 1.0
    while not stopping.is_set():
        started = time.monotonic()
        task = asyncio.create_task(
            queue.run_worker_async(
                queues=releases.queues_of(backends.alias),
                concurrency=concurrency,
                update_heartbeat_interval=settings.worker_heartbeat,
                stalled_worker_timeout=settings.worker_stalled_after,
                additional_context={"backends": backends},
                install_signal_handlers=False,
            )
        )
        running[:] = [task]
        try:
            await task
            reason = "database unavailable (the queue's listener stopped)"
        except asyncio.CancelledError:
            if stopping.is_set():
                return
            raise
        except (ConnectorException, psycopg.OperationalError, PoolTimeout) as error:
            reason = f"database unavailable ({type(error).__name__})"
        if stopping.is_set():
            return
        if time.monotonic() - started > RESTART_MAX:
            delay = 1.0
        log.warning("%s: the worker starts again in %.0f s", reason, delay)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), delay)
        delay = min(delay * 2, RESTART_MAX)


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
        handler.addFilter(QuietHousekeeping())
    asyncio.run(_run(concurrency or get_settings().worker_concurrency))
