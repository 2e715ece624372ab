"""What every service function receives: the clients the lifespan opened and the settings.

REST handlers, agent tools and (later) pages and worker jobs hand the same `Backends` to the
same service functions, so no face reaches a client on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from elasticsearch import AsyncElasticsearch
from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from app.auth.gate import Gate
from app.lib.paging import Cursors
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class Backends:
    es: AsyncElasticsearch
    pool: AsyncConnectionPool
    redis: Redis
    settings: Settings
    cursors: Cursors
    gate: Gate

    @property
    def alias(self) -> str:
        """The read alias of the live release."""
        return self.settings.index_alias
