"""Health of each dependency and of the live index."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import msgspec
import psycopg
from elasticsearch import AsyncElasticsearch
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from redis.asyncio import Redis

from app.lib.elastic import body
from app.lib.release import releases


class Dependency(msgspec.Struct, kw_only=True, omit_defaults=True):
    status: str
    """`up` or `down`."""
    detail: str | None = None


class IndexState(msgspec.Struct, kw_only=True):
    alias: str
    name: str | None
    documents: int | None
    data_referencia: str | None = None
    """The live release's reference date (`YYYY-MM-DD`): how fresh the data is."""
    carregada_em: str | None = None
    """When the indexer published the live release (UTC, ISO 8601)."""


class AuditState(msgspec.Struct, kw_only=True):
    """The audit queue of the process that answered (each app process has its own)."""

    pendentes: int
    """Rows waiting to be written."""
    perdidas: int
    """Rows the database refused, or still unwritten when a stop outlasted an outage, since the
    process started."""
    descartadas: int
    """Rows dropped because the queue was full, since the process started."""


class LoadState(msgspec.Struct, kw_only=True):
    """The load shedding of the process that answered (`app.lib.shedding`), since it started."""

    em_andamento: int
    """Requests it is answering now (health checks, always admitted, are not counted)."""
    limite: int
    """`MAX_IN_FLIGHT`: past it, every request is refused with 503."""
    buscas_em_andamento: int
    limite_de_buscas: int
    """Searches it admits at once now: adapted between its floor and `teto_de_buscas` to keep
    their average latency within `alvo_de_latencia_ms`."""
    teto_de_buscas: int
    """`MAX_SEARCHES_IN_FLIGHT`."""
    alvo_de_latencia_ms: float
    """`SEARCH_LATENCY_TARGET_MS` (0: the search limit stays at its ceiling)."""
    latencia_media_de_buscas_ms: float
    """The moving average of its searches' latency that the limit follows."""
    recusadas: int
    """Requests refused with 503 since it started."""
    buscas_recusadas: int
    """Of them, searches refused by the search limit alone."""


class Status(msgspec.Struct, kw_only=True):
    status: str
    """`ok` when every dependency is up, `degraded` otherwise."""
    dependencies: dict[str, Dependency]
    index: IndexState
    auditoria: AuditState | None = None
    consultas_rapidas: int | None = None
    """Lookups by CNPJ the answering process served through its fast lane since it started
    (`app.lookup.fast`); absent when the lane is off."""
    carga: LoadState | None = None
    """The answering process's load shedding; absent when the app runs without it."""


async def _guard(check: Awaitable[str | None], timeout: float) -> Dependency:
    try:
        detail = await asyncio.wait_for(check, timeout)
    except TimeoutError:
        return Dependency(status="down", detail=f"no answer within {timeout:g} s")
    except Exception as error:
        return Dependency(status="down", detail=type(error).__name__)
    return Dependency(status="up", detail=detail)


class _Health(msgspec.Struct):
    status: str
    number_of_nodes: int = 1
    unassigned_shards: int = 0


class _Count(msgspec.Struct):
    count: int


async def _elasticsearch(es: AsyncElasticsearch) -> str:
    """`cluster green` (every shard copy allocated), or `cluster yellow` with the count of nodes
    and of copies waiting for a node (every primary is served: reads go on); red is down."""
    health = msgspec.json.decode(body(await es.cluster.health()), type=_Health)
    if health.status == "red":
        raise RuntimeError("cluster health is red")
    if health.status == "yellow":
        nodes = f"{health.number_of_nodes} node" + ("s" if health.number_of_nodes != 1 else "")
        return f"cluster yellow: {nodes}, {health.unassigned_shards} shard copies unassigned"
    return f"cluster {health.status}"


async def _postgresql(pool: AsyncConnectionPool, url: str, timeout: float) -> str | None:
    """`SELECT 1` on a pooled connection. When the pool has none to give (its connections
    were broken by a PostgreSQL restart, or it is between reconnection attempts), its idle
    connections are checked (the broken ones replaced) and PostgreSQL itself is asked on a
    connection of its own: the status says `up` as soon as PostgreSQL answers, even in a
    process whose requests have not needed PostgreSQL since (keys are cached)."""
    try:
        async with pool.connection(timeout=timeout / 2) as connection:
            await connection.execute("SELECT 1")
        return None
    except (psycopg.OperationalError, PoolTimeout):
        await pool.check()
    async with await psycopg.AsyncConnection.connect(url) as connection:
        await connection.execute("SELECT 1")
    return "answered on a new connection; the pool is reconnecting"


async def _redis(redis: Redis) -> None:
    await redis.ping()


async def _index(es: AsyncElasticsearch, alias: str, timeout: float) -> IndexState:
    try:
        async with asyncio.timeout(timeout):
            live = await releases(es, alias)
            counted = msgspec.json.decode(body(await es.count(index=alias)), type=_Count)
    except Exception:
        return IndexState(alias=alias, name=None, documents=None)
    newest = live[-1] if live else None
    return IndexState(
        alias=alias,
        name=",".join(release.indice for release in live),
        documents=counted.count,
        data_referencia=newest.data_referencia if newest else None,
        carregada_em=newest.carregada_em if newest else None,
    )


async def status(
    es: AsyncElasticsearch,
    pool: AsyncConnectionPool,
    redis: Redis,
    alias: str,
    timeout: float,
    *,
    database_url: str,
) -> Status:
    elastic, postgres, cache, index = await asyncio.gather(
        _guard(_elasticsearch(es), timeout),
        _guard(_postgresql(pool, database_url, timeout), timeout),
        _guard(_redis(redis), timeout),
        _index(es, alias, timeout),
    )
    dependencies = {"elasticsearch": elastic, "postgresql": postgres, "redis": cache}
    healthy = all(d.status == "up" for d in dependencies.values())
    return Status(status="ok" if healthy else "degraded", dependencies=dependencies, index=index)
