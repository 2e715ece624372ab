"""What every service function receives: the clients the process opened and the settings.

REST handlers, agent tools, pages and worker jobs hand the same `Backends` to the same service
functions, so no face reaches a client on its own. The app's lifespan builds one; so does the
worker (`app.worker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import procrastinate
from elasticsearch import AsyncElasticsearch
from psycopg_pool import AsyncConnectionPool

from app.lib.paging import Cursors
from app.lib.release import LiveRelease
from app.lookup.records import RecordStore
from app.settings import Settings
from app.webhooks.delivery import Sender


@dataclass(frozen=True, slots=True)
class Backends:
    es: AsyncElasticsearch
    pool: AsyncConnectionPool
    settings: Settings
    cursors: Cursors
    secret: bytes
    """The server secret (`API_KEY_SECRET`): keyed hashes and webhook signing secrets."""
    queue: procrastinate.App
    """The job queue, opened on `pool`: jobs are deferred in the caller's transaction."""
    sender: Sender
    """The process's webhook deliveries (pooled HTTP, per-origin bounds)."""
    records: RecordStore | None = None
    """The live release's record store, for lookups by key (`app.lookup.records`)."""
    live: LiveRelease = field(default_factory=LiveRelease)
    """The live release's metadata, read at most once a second (`app.lib.release`)."""

    @property
    def alias(self) -> str:
        """The read alias of the live release."""
        return self.settings.index_alias
