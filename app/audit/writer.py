"""An in-process queue of audit rows drained by a background task in batches.

Requests only `put_nowait` a row (no database round trip on the critical path). The task
lets rows gather for `LINGER` seconds after the first, then writes them in one transaction.
On shutdown the lifespan calls `close()`, which queues a stop marker behind every row already
queued and waits until the task has written them all: a clean shutdown loses nothing. A write
that fails because the database is unreachable is retried with backoff (every 5 s once the
first retries are spent) for as long as the database stays away: an outage of any length loses
no row while the queue has room. The queue is bounded, so an outage long enough to fill it drops
the newest rows and counts them (`dropped`) rather than exhausting memory; a shutdown while the
database is unreachable waits `CLOSE_TIMEOUT` seconds for it, then counts what it could not
write (`lost`). A batch the database refuses for any other reason is written again row by row,
each in its own transaction, so one row that cannot be stored never takes the others with it;
only the rows that truly fail are logged and counted (`lost`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from app.audit import repository
from app.audit.repository import Entrada

log = logging.getLogger("app.audit")

BATCH = 500
LINGER = 0.2
"""Seconds the writer lets rows gather after the first one, so a busy process writes one
transaction per batch instead of one per request."""
MAX_QUEUED = 100_000
RETRY_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds before each new attempt at a batch while the database is unreachable; the last one
repeats until it answers."""
CLOSE_TIMEOUT = 15.0
"""Seconds `close()` waits for an unreachable database before it counts the unwritten rows as
lost (a process told to stop does not wait forever)."""
_STOP: Final = object()


class AuditWriter:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool
        self._queue: asyncio.Queue[Entrada | object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0
        """Rows refused because the queue was full."""
        self.lost = 0
        """Rows that could not be written: the database refused them, or was still unreachable
        when the process stopped."""
        self._deadline: float | None = None
        """When closing: the loop time after which an unreachable database loses the rows."""
        self._abandoned = False
        """Closing, the database stayed unreachable past the deadline: the rest is lost unsent."""

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="audit-writer")

    def record(self, row: Entrada) -> None:
        if self._queue.qsize() >= MAX_QUEUED:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                log.error("audit queue full: %d rows dropped so far", self.dropped)
            return
        self._queue.put_nowait(row)

    async def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Writes every queued row, then stops the task; an unreachable database is waited for
        `timeout` seconds, then the rows not written are counted as lost."""
        if self._task is None:
            return
        self._deadline = asyncio.get_running_loop().time() + timeout
        self._queue.put_nowait(_STOP)
        await self._task
        self._task = None

    async def _run(self) -> None:
        while True:
            batch: list[Entrada] = []
            item = await self._queue.get()
            if item is not _STOP:
                await asyncio.sleep(LINGER)
            while item is not _STOP:
                assert isinstance(item, Entrada)
                batch.append(item)
                if len(batch) >= BATCH or self._queue.empty():
                    break
                item = self._queue.get_nowait()
            if batch:
                await self._write(batch)
            if item is _STOP:
                return

    def _remaining(self) -> float | None:
        """Seconds left before a closing writer gives up (None while it is not closing)."""
        if self._deadline is None:
            return None
        return self._deadline - asyncio.get_running_loop().time()

    async def _write(self, batch: list[Entrada]) -> None:
        attempt = 0
        while True:
            remaining = self._remaining()
            if remaining is not None and remaining <= 0 and (attempt or self._abandoned):
                self._abandoned = True
                self.lost += len(batch)
                log.error("audit: database unreachable at shutdown, %d rows lost", len(batch))
                return
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await repository.write(conn, batch)
                if attempt:
                    log.warning("audit: database back, %d rows written", len(batch))
                return
            except (psycopg.OperationalError, PoolTimeout) as error:
                delay = RETRY_DELAYS[min(attempt, len(RETRY_DELAYS) - 1)]
                remaining = self._remaining()
                if remaining is not None:
                    delay = max(min(delay, remaining), 0)
                if attempt < len(RETRY_DELAYS) or attempt % 12 == 0:
                    log.warning("audit write failed (%s); retrying in %.1f s", error, delay)
                attempt += 1
                await asyncio.sleep(delay)
            except psycopg.Error as error:
                log.warning("audit batch of %d refused (%s); writing row by row", len(batch), error)
                await self._write_each(batch)
                return

    async def _write_each(self, batch: list[Entrada]) -> None:
        for row in batch:
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await repository.write(conn, [row])
            except (psycopg.Error, PoolTimeout) as error:
                self.lost += 1
                log.error(
                    "audit: row lost (key %s, %s %s, status %d, ip %r): %s",
                    row.chave_id, row.metodo, row.rota, row.status, row.ip, error,
                )  # fmt: skip
