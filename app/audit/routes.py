"""`GET /v1/admin/auditoria`: the audit log, newest first, filtered and paged by cursor; and
`GET /v1/me/uso`: the caller's usage counters."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Request, get
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter
from psycopg_pool import AsyncConnectionPool

from app.audit import repository
from app.audit.repository import Filtro, Registro, Uso
from app.auth.guards import identity, require_admin
from app.context import Backends
from app.lib.paging import MAX_CURSOR, digest

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


class Auditoria(msgspec.Struct, kw_only=True):
    data: list[Registro]
    total: int
    next_cursor: str | None


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
    request_digest = digest(filtro)
    before = backends.cursors.after_id(cursor, "auditoria", request_digest)
    async with pool.connection() as conn:
        rows = await repository.page(conn, filtro, before, limit + 1)
        total = await repository.count(conn, filtro)
    page, next_cursor = backends.cursors.next_by_id(rows, limit, "auditoria", request_digest)
    return Auditoria(data=page, total=total, next_cursor=next_cursor)


USAGE_DAYS = 31


class UsoConta(msgspec.Struct, kw_only=True):
    plano: str
    limite_por_minuto: int
    data: list[Uso]
    total: int
    next_cursor: str | None = None


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
    caller = identity(request)
    async with pool.connection() as conn:
        rows = await repository.usage(conn, caller.conta_id, USAGE_DAYS)
    return UsoConta(plano=caller.plano, limite_por_minuto=caller.limite, data=rows, total=len(rows))
