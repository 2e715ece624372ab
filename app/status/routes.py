"""`GET /v1/status` (alias `/health`): 200 when every dependency answers, 503 otherwise."""

from __future__ import annotations

from functools import cache
from typing import Any

from elasticsearch import AsyncElasticsearch
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from app.auth.access import NO_TOKEN, Access
from app.auth.address import Network, in_any, parse_networks
from app.auth.gate import Gate
from app.lib.responses import json_response
from app.lib.shedding import SHEDDING, Shedding
from app.lookup.fast import FAST_LANE
from app.settings import Settings
from app.status.service import AuditState, LoadState, Status, status


@get(
    ["/v1/status", "/health"],
    summary="Service status",
    description=(
        "State of Elasticsearch, PostgreSQL and Redis, and the live release (alias, documents, "
        "reference date, load time). Callers from `STATUS_DETAIL_NETWORKS` (loopback by "
        "default) also see the index's name and the answering process's counters."
    ),
    responses={
        200: ResponseSpec(
            data_container=Status, generate_examples=False, description="Every dependency is up"
        ),
        503: ResponseSpec(
            data_container=Status, generate_examples=False, description="A dependency is down"
        ),
    },
    opt={"access": Access.OPEN},
    security=NO_TOKEN,
    tags=["Status"],
)
async def service_status(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    pool: NamedDependency[AsyncConnectionPool],
    redis: NamedDependency[Redis],
    settings: NamedDependency[Settings],
    gate: NamedDependency[Gate],
) -> Response[bytes]:
    result = await status(
        es,
        pool,
        redis,
        settings.index_alias,
        settings.health_timeout,
        database_url=settings.database_url,
    )
    if in_any(gate.caller(request.scope).address, _networks(settings.status_detail_networks)):
        audit = gate.audit
        result.auditoria = AuditState(
            pendentes=audit.pending, perdidas=audit.lost, descartadas=audit.dropped
        )
        lane = request.app.state.get(FAST_LANE)
        result.consultas_rapidas = lane.answered if lane is not None else None
        shedding = request.app.state.get(SHEDDING)
        result.carga = load_state(shedding) if shedding is not None else None
    else:
        result.index.name = None  # the release, not how this deployment names its indices
    return json_response(result, status_code=200 if result.status == "ok" else 503)


@cache
def _networks(raw: str) -> tuple[Network, ...]:
    return tuple(parse_networks(raw))


def load_state(shedding: Shedding) -> LoadState:
    limit = shedding.searches
    return LoadState(
        em_andamento=shedding.in_flight, limite=shedding.limit,
        buscas_em_andamento=shedding.searching, limite_de_buscas=int(limit.value),
        teto_de_buscas=limit.ceiling, alvo_de_latencia_ms=round(limit.target * 1000, 1),
        latencia_media_de_buscas_ms=round(limit.average * 1000, 1),
        recusadas=shedding.refused, buscas_recusadas=shedding.refused_searches,
    )  # fmt: skip
