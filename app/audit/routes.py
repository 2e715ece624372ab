"""`GET /v1/admin/auditoria`: the audit log, newest first, filtered and paged by cursor; and
`GET /v1/me/uso`: the caller's usage counters."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Request, get
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter
from psycopg_pool import AsyncConnectionPool

from app.audit.repository import Filtro
from app.audit.service import Auditoria, UsoConta, audit_page, usage_of
from app.auth.guards import identity, require_admin
from app.context import Backends
from app.lib.paging import MAX_CURSOR

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


@get(
    ["/v1/admin/auditoria", "/admin/auditoria"],
    summary="Audit log (administrator)",
    description=(
        "Authenticated calls, newest first: key id (never the key), method, route (or `/mcp`), "
        "operation (the tool, for the agent interface), path, IP, user agent, status, units and "
        "time. Filters: `chave` (key id), `rota` (route template or path), `operacao`, "
        "`status`, `desde`/`ate` (ISO 8601). `limit` 50 by default, at most 500; pass "
        "`next_cursor` back as `cursor` with the same filters for the next page."
    ),
    guards=[require_admin],
    opt={"query": ("chave", "rota", "operacao", "status", "desde", "ate", "limit", "cursor")},
    tags=["Admin"],
)
async def audit_log(
    pool: NamedDependency[AsyncConnectionPool],
    backends: NamedDependency[Backends],
    chave: Annotated[str | None, QueryParameter(max_length=64)] = None,
    rota: Annotated[str | None, QueryParameter(max_length=2048)] = None,
    operacao: Annotated[str | None, QueryParameter(max_length=64)] = None,
    status: Annotated[int | None, QueryParameter(ge=100, le=599)] = None,
    desde: FromQuery[datetime | None] = None,
    ate: FromQuery[datetime | None] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: Annotated[str | None, QueryParameter(max_length=MAX_CURSOR)] = None,
) -> Auditoria:
    filtro = Filtro(chave=chave, rota=rota, operacao=operacao, status=status, desde=desde, ate=ate)
    return await audit_page(backends, filtro, cursor, limit)


@get(
    ["/v1/me/uso", "/me/uso"],
    summary="My usage",
    description=(
        "The account's plan and rate limit, and per key and day over the last 31 days: "
        "`consultas` (lookups), `buscas` (searches), `analises`, `exportacoes`."
    ),
    tags=["Accounts"],
)
async def my_usage(
    request: Request[Any, Any, Any], pool: NamedDependency[AsyncConnectionPool]
) -> UsoConta:
    return await usage_of(pool, identity(request))
