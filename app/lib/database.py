"""The PostgreSQL connection pools of the app and the worker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

RECONNECT_WINDOW = 2.0
"""Seconds a lost connection is retried in the background (after 0, 1 and 2 s) before the pool
stops trying and leaves the next request to start a fresh attempt at once. The library's default
(5 minutes with doubling delays) leaves a pool waiting up to minutes after PostgreSQL is back."""


def connection_pool(
    url: str,
    *,
    max_size: int,
    timeout: float = 30.0,
    kwargs: dict[str, Any] | None = None,
    configure: Callable[[AsyncConnection[Any]], Awaitable[None]] | None = None,
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
        reconnect_timeout=RECONNECT_WINDOW,
    )
