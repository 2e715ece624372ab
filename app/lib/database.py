"""The PostgreSQL connection pools of the app and the worker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

RECONNECT_WINDOW = 2.0
"""Seconds the API's pool retries a lost connection in the background (after 0, 1 and 2 s)
before it stops and leaves the next request to start a fresh attempt at once. The library's
default (5 minutes with doubling delays) can leave a pool waiting seconds after PostgreSQL is
back; giving up early suits only a pool whose callers wait briefly (the API's wait at most
`REQUEST_TIMEOUT`): a caller already waiting when the pool gives up is not woken by a new
attempt, so the worker's pools, whose callers wait longer, keep the default."""


def connection_pool(
    url: str,
    *,
    max_size: int,
    timeout: float = 30.0,
    kwargs: dict[str, Any] | None = None,
    configure: Callable[[AsyncConnection[Any]], Awaitable[None]] | None = None,
    reconnect_timeout: float = 300.0,
) -> AsyncConnectionPool:
    """A closed pool of at most `max_size` connections (one kept open); open it with
    `await pool.open(wait=False)`."""
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        timeout=timeout,
        kwargs=kwargs,
        configure=configure,
        reconnect_timeout=reconnect_timeout,
    )
